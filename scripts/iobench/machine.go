package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// machineFacts are what docs/benchmarks.md quotes about the machine.
type machineFacts struct {
	CPU      string       `json:"cpu"`
	Cores    int          `json:"cores"`
	Kernel   string       `json:"kernel"`
	Go       string       `json:"go"`
	Date     string       `json:"date"`
	Commit   string       `json:"commit,omitempty"`
	Fio      string       `json:"fio"`
	Latscope string       `json:"latscope"`
	Pinning  string       `json:"cpus,omitempty"` // taskset -c list both tools ran under
	Storage  storageFacts `json:"storage"`
}

// storageFacts describe where the data file lives.
type storageFacts struct {
	Dir        string `json:"dir"`
	Filesystem string `json:"filesystem"`
	// InMemory is true on tmpfs or ramfs, where O_DIRECT (if accepted)
	// still reads memory: the comparison then says nothing about storage.
	InMemory   bool   `json:"in_memory"`
	Device     string `json:"device,omitempty"`    // e.g. vda, nvme0n1
	Partition  string `json:"partition,omitempty"` // e.g. nvme0n1p2
	Model      string `json:"model,omitempty"`
	Vendor     string `json:"vendor,omitempty"`
	Rotational string `json:"rotational,omitempty"` // sysfs queue/rotational: "0" or "1"
	Scheduler  string `json:"scheduler,omitempty"`
	SizeBytes  int64  `json:"size_bytes,omitempty"`
	Note       string `json:"note,omitempty"`
}

// gatherMachine collects the machine facts; a fact that cannot be read is
// left empty rather than failing the benchmark.
func gatherMachine(ctx context.Context, dir, fio, latscope, pinning string) machineFacts {
	return machineFacts{
		CPU:      cpuModel(),
		Cores:    runtime.NumCPU(),
		Kernel:   readTrimmed("/proc/sys/kernel/osrelease"),
		Go:       runtime.Version(),
		Date:     time.Now().UTC().Format(time.RFC3339),
		Commit:   commandLine(ctx, "git", "rev-parse", "--short", "HEAD"),
		Fio:      commandLine(ctx, fio, "--version"),
		Latscope: strings.TrimPrefix(strings.TrimPrefix(commandLine(ctx, latscope, "--version"), "latscope "), "version "),
		Pinning:  pinning,
		Storage:  describeStorage(dir),
	}
}

// cpuModel is /proc/cpuinfo's first "model name".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

// readTrimmed returns a small file's content without surrounding space, ""
// when it cannot be read.
func readTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// commandLine returns the first line a command prints, "" when it fails.
func commandLine(ctx context.Context, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return first
}
