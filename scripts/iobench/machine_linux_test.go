//go:build linux

package main

import (
	"os"
	"testing"
)

// /dev/shm is tmpfs on Linux systems that have it: the harness must say
// that a data file there is read from memory.
func TestDescribeStorageTmpfs(t *testing.T) {
	if _, err := os.Stat("/dev/shm"); err != nil {
		t.Skip("no /dev/shm")
	}
	s := describeStorage("/dev/shm")
	if s.Filesystem != "tmpfs" {
		t.Skipf("/dev/shm is %s here", s.Filesystem)
	}
	if !s.InMemory || s.Note == "" || s.Device != "" {
		t.Errorf("%+v", s)
	}
}

// The test's own directory is on some disk or virtual filesystem; whatever
// it is, the description names a filesystem and never claims memory unless
// it is tmpfs or ramfs.
func TestDescribeStorageHere(t *testing.T) {
	s := describeStorage(".")
	if s.Filesystem == "" {
		t.Fatalf("no filesystem: %+v", s)
	}
	if s.InMemory != (s.Filesystem == "tmpfs" || s.Filesystem == "ramfs") {
		t.Errorf("%+v", s)
	}
	t.Logf("%+v", s)
}

func TestActiveScheduler(t *testing.T) {
	for in, want := range map[string]string{"none [mq-deadline] kyber bfq": "mq-deadline", "[none] mq-deadline": "none", "none": "none", "": ""} {
		if got := activeScheduler(in); got != want {
			t.Errorf("activeScheduler(%q) = %q, want %q", in, got, want)
		}
	}
}
