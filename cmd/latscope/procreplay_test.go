package main

// Replaying snapshots of /proc to a tool, so that latscope and sysstat
// compute their figures from the very same counters.
//
// sysstat and latscope sample /proc at their own instants; on a loaded
// machine two 1-second windows a few milliseconds apart differ by more
// than sysstat's last printed digit (a CPU's share moves by 0.5 % in 5 ms).
// So the test snapshots the /proc files once a second while a load runs,
// then replays the snapshots to each tool in a private mount namespace
// whose /proc is a tmpfs holding the snapshot of the moment: the tool runs
// unchanged (iostat -x 1 N, sadc 1 N, latscope record host:) and reads
// snapshot k at its k-th sample. iostat reads /sys/block/DEV/stat rather
// than /proc/diskstats: a tmpfs on /sys/block holds those files too, made
// from the same diskstats lines. The replayer installs snapshot k+1 as soon
// as the tool has read snapshot k, which it sees from the files' access
// times: an installed file's atime is the epoch, and the kernel's relatime
// sets it to now at the first read.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// replayEnv names the replay plan when the test binary runs as the
// replayer (inside `unshare -m`), see TestMain.
const replayEnv = "LATSCOPE_PROC_REPLAY"

// procFiles are the /proc files the snapshots hold: what sysstat's sadc
// and iostat and latscope's host: source read.
var procFiles = []string{
	"stat", "diskstats", "uptime", "meminfo", "loadavg", "vmstat",
	"net/dev", "net/snmp", "pressure/cpu", "pressure/io", "pressure/memory",
}

// replayPlan tells the replayer what to run on which snapshots.
type replayPlan struct {
	// Snapshots holds one directory per snapshot, named 0, 1, ... (a
	// directory appears whole, by rename, so the replay may follow the
	// capture).
	Snapshots string
	Count     int
	Argv      []string
	Stdout    string
	Stderr    string
	// Disks are the names in /sys/block, whose stat files the replay
	// makes from the snapshot's /proc/diskstats.
	Disks []string
	// Marks are the files (absolute paths) whose first read says the tool
	// took a sample.
	Marks []string
	// Interrupt stops the tool with SIGINT once it has read the last
	// snapshot (a tool that runs until stopped, not for a count).
	Interrupt bool
}

// epoch is the access time of a file nobody has read since it was
// installed.
var epoch = time.Unix(0, 0)

// settle lets a tool read the rest of its files once it has read its
// marks, well within the half interval latscope's first two samples
// are at least apart (it samples on wall-clock boundaries).
const settle = 30 * time.Millisecond

// replayMain runs a replay plan in the current (private) mount namespace
// and returns the exit code.
func replayMain(planPath string) int {
	if err := replay(planPath); err != nil {
		fmt.Fprintln(os.Stderr, "replay:", err)
		return 1
	}
	return 0
}

func replay(planPath string) error {
	var plan replayPlan
	b, err := os.ReadFile(planPath)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &plan); err != nil {
		return fmt.Errorf("%s: %w", planPath, err)
	}
	for _, dir := range []string{"/proc", "/sys/block"} {
		if err := syscall.Mount("none", dir, "tmpfs", 0, "mode=0755"); err != nil {
			return fmt.Errorf("mounting a tmpfs on %s (needs root in a private mount namespace): %w", dir, err)
		}
	}
	if err := install(plan, 0); err != nil {
		return err
	}
	cmd := exec.Command(plan.Argv[0], plan.Argv[1:]...)
	if cmd.Stdout, err = os.Create(plan.Stdout); err != nil {
		return err
	}
	if cmd.Stderr, err = os.Create(plan.Stderr); err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	var waitErr error
	done := make(chan struct{}) // closed when the tool has exited, with waitErr
	go func() { waitErr = cmd.Wait(); close(done) }()
	for k := 1; k < plan.Count; k++ {
		if err := waitRead(plan.Marks, done); err != nil {
			return fmt.Errorf("%s, snapshot %d: %w", plan.Argv[0], k-1, err)
		}
		if err := install(plan, k); err != nil {
			return err
		}
	}
	if err := waitRead(plan.Marks, done); err != nil {
		return fmt.Errorf("%s, last snapshot: %w", plan.Argv[0], err)
	}
	if plan.Interrupt {
		cmd.Process.Signal(os.Interrupt)
	}
	select {
	case <-done:
		return waitErr
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		return fmt.Errorf("%s did not stop after its last sample", plan.Argv[0])
	}
}

// install puts snapshot k in /proc and /sys/block, waiting for the
// capture to write it.
func install(plan replayPlan, k int) error {
	from := filepath.Join(plan.Snapshots, strconv.Itoa(k))
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(from); err == nil {
			break
		} else if time.Now().After(deadline) {
			return fmt.Errorf("snapshot %d never came: %w", k, err)
		}
	}
	for _, f := range procFiles {
		b, err := os.ReadFile(filepath.Join(from, f))
		if errors.Is(err, os.ErrNotExist) {
			continue // this kernel has no such file
		} else if err != nil {
			return err
		}
		if err := installFile(filepath.Join("/proc", f), b); err != nil {
			return err
		}
		if f == "diskstats" {
			if err := installSysBlock(plan.Disks, b); err != nil {
				return err
			}
		}
	}
	return nil
}

// installFile rewrites a file in place, unread (atime at the epoch). In
// place, not renamed: latscope keeps its /proc files open and reads them
// again from the start; the tool reads nearly a second later, so it never
// sees a half-written file.
func installFile(to string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(to, b, 0o444); err != nil {
		return err
	}
	return os.Chtimes(to, epoch, time.Now())
}

// installSysBlock writes /sys/block/DEV/stat, the device's counters of
// /proc/diskstats without major, minor and name.
func installSysBlock(disks []string, diskstats []byte) error {
	for _, line := range strings.Split(string(diskstats), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 4 || !slices.Contains(disks, fields[2]) {
			continue
		}
		var stat strings.Builder
		for i, v := range fields[3:] {
			if i > 0 {
				stat.WriteByte(' ')
			}
			fmt.Fprintf(&stat, "%8s", v)
		}
		stat.WriteByte('\n')
		if err := installFile(filepath.Join("/sys/block", fields[2], "stat"), []byte(stat.String())); err != nil {
			return err
		}
	}
	return nil
}

// waitRead waits until the tool has read every mark since it was
// installed, then lets it read the rest.
func waitRead(marks []string, done <-chan struct{}) error {
	deadline := time.Now().Add(15 * time.Second)
	for _, m := range marks {
		for exited := false; ; {
			var st syscall.Stat_t
			if err := syscall.Stat(m, &st); err != nil {
				return err
			}
			switch {
			case st.Atim.Sec != 0:
			case exited:
				return fmt.Errorf("the tool stopped before reading %s", m)
			case time.Now().After(deadline):
				return fmt.Errorf("the tool did not read %s within 15 s", m)
			default:
				// Look again after a while, or once more when the tool
				// has exited (it may have read the mark last).
				select {
				case <-done:
					exited = true
				case <-time.After(10 * time.Millisecond):
				}
				continue
			}
			break
		}
	}
	time.Sleep(settle)
	return nil
}

// snapshotProc copies the /proc files into dir/k, whole, by rename.
func snapshotProc(dir string, k int) error {
	tmp := filepath.Join(dir, strconv.Itoa(k)+".tmp")
	for _, f := range procFiles {
		b, err := os.ReadFile(filepath.Join("/proc", f))
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		to := filepath.Join(tmp, f)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			return err
		}
	}
	return os.Rename(tmp, filepath.Join(dir, strconv.Itoa(k)))
}

// startReplay runs argv on the snapshots in dir, in a private mount
// namespace, through the test binary acting as the replayer.
func startReplay(dir, name string, count int, argv []string, interrupt bool, marks ...string) (*exec.Cmd, error) {
	disks, err := os.ReadDir("/sys/block")
	if err != nil {
		return nil, err
	}
	plan := replayPlan{Snapshots: filepath.Join(dir, "snap"), Count: count, Argv: argv,
		Stdout: filepath.Join(dir, name+".out"), Stderr: filepath.Join(dir, name+".err"), Marks: marks, Interrupt: interrupt}
	for _, d := range disks {
		plan.Disks = append(plan.Disks, d.Name())
	}
	b, err := json.Marshal(plan)
	if err != nil {
		return nil, err
	}
	planPath := filepath.Join(dir, name+".plan.json")
	if err := os.WriteFile(planPath, b, 0o644); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", self)
	cmd.Env = append(os.Environ(), replayEnv+"="+planPath)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	// Its own process group, so that a failed test stops the replayer
	// and its tool together.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, cmd.Start()
}

// stopReplay kills a replay's process group unless it has exited.
func stopReplay(cmd *exec.Cmd) {
	if cmd.ProcessState == nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}
}
