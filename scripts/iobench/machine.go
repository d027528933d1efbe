package main

import (
	"context"

	"github.com/latscope/latscope/scripts/benchkit"
)

// machineFacts are what docs/benchmarks.md quotes about the machine: the
// shared facts (flat in the JSON), the tools' versions and the storage.
type machineFacts struct {
	benchkit.Machine
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
		Machine:  benchkit.GatherMachine(ctx),
		Fio:      benchkit.CommandLine(ctx, fio, "--version"),
		Latscope: benchkit.LatscopeVersion(ctx, latscope),
		Pinning:  pinning,
		Storage:  describeStorage(dir),
	}
}
