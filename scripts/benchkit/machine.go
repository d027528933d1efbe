package benchkit

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// Machine holds the facts about the machine and the build that
// docs/benchmarks.md quotes beside every figure. Harnesses embed it in
// their own facts (the JSON fields stay flat) and add the peer tools'
// versions.
type Machine struct {
	CPU    string `json:"cpu"`
	Cores  int    `json:"cores"`
	Kernel string `json:"kernel"`
	Go     string `json:"go"`
	Date   string `json:"date"`
	Commit string `json:"commit,omitempty"`
}

// Summary is the machine in one line: "CPU, 2 cores; kernel K; go1.x".
func (m Machine) Summary() string {
	return fmt.Sprintf("%s, %d cores; kernel %s; %s", m.CPU, m.Cores, m.Kernel, m.Go)
}

// GatherMachine collects the facts; one that cannot be read is left empty
// rather than failing the benchmark.
func GatherMachine(ctx context.Context) Machine {
	return Machine{
		CPU:    CPUModel(),
		Cores:  runtime.NumCPU(),
		Kernel: ReadTrimmed("/proc/sys/kernel/osrelease"),
		Go:     runtime.Version(),
		Date:   time.Now().UTC().Format(time.RFC3339),
		Commit: CommandLine(ctx, "git", "rev-parse", "--short", "HEAD"),
	}
}

// CPUModel is /proc/cpuinfo's first "model name", else the architecture.
func CPUModel() string {
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

// ReadTrimmed returns a small file's content without surrounding space, ""
// when it cannot be read.
func ReadTrimmed(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// CommandLine returns the first line a command prints on stdout, "" when
// it fails.
func CommandLine(ctx context.Context, name string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).Output()
	if err != nil {
		return ""
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(first)
}

// DebianVersion is the installed version of a Debian package ("3.7-1"), ""
// when dpkg does not know it.
func DebianVersion(ctx context.Context, pkg string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f", "${Version}", pkg).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// LatscopeVersion is what `latscope --version` says, without the name.
func LatscopeVersion(ctx context.Context, bin string) string {
	v := CommandLine(ctx, bin, "--version")
	return strings.TrimPrefix(strings.TrimPrefix(v, "latscope "), "version ")
}
