package host

import (
	"bytes"

	"github.com/latscope/latscope/input"
)

// CPU states in /proc/stat's order.
const (
	cpuUser = iota
	cpuNice
	cpuSystem
	cpuIdle
	cpuIowait
	cpuIrq
	cpuSoftirq
	cpuSteal
	cpuGuest
	cpuGuestNice
	cpuStates
)

// cpuTimes are one CPU's (or all CPUs') jiffies per state.
type cpuTimes struct {
	name  string // "all" for the "cpu" line, else "cpu0", "cpu1", ...
	ticks [cpuStates]uint64
}

// The "name value" lines of /proc/stat that sar reads.
const (
	stProcsBlocked = iota
	stCtxt
	stProcesses
	stFields
)

var statNames = [stFields]string{"procs_blocked", "ctxt", "processes"}

// statSnap is what /proc/stat says: the CPU lines (all first) and the
// task counts; have marks the named lines present.
type statSnap struct {
	cpus  []cpuTimes
	named [stFields]uint64
	have  [stFields]bool
}

// parseStat reads /proc/stat into s. Kernels before 2.6.33 have fewer
// states: missing ones read as 0.
func parseStat(b []byte, s *statSnap) []problem {
	var probs []problem
	var buf [24][]byte
	f := buf[:0]
	n := 0
	s.have = [stFields]bool{}
	lines(b, func(ln int, line []byte) {
		// Only the cpu lines and the named ones: intr and softirq have
		// hundreds of fields, not worth splitting every second.
		named := -1
		for i, name := range statNames {
			if bytes.HasPrefix(line, []byte(name)) {
				named = i
			}
		}
		if named < 0 && !bytes.HasPrefix(line, []byte("cpu")) {
			return
		}
		f = splitFields(f, line)
		if named >= 0 {
			v, ok := uintField(f)
			if !ok || string(f[0]) != statNames[named] {
				probs = append(probs, problem{ln, statNames[named] + " without a number"})
				return
			}
			s.named[named], s.have[named] = v, true
			return
		}
		if len(f) < 5 {
			probs = append(probs, problem{ln, "a cpu line with fewer than 4 states"})
			return
		}
		var t cpuTimes
		if p, ok := parseCounters(t.ticks[:], f[1:], ln, "cpu state"); !ok {
			probs = append(probs, p)
			return
		}
		var at *cpuTimes
		at, s.cpus = slot(s.cpus, n)
		t.name = "all"
		if len(f[0]) > 3 {
			t.name = intern(at.name, f[0])
		}
		*at = t
		n++
	})
	s.cpus = s.cpus[:n]
	return probs
}

// uintField reads the number of a "name value" line.
func uintField(f [][]byte) (uint64, bool) {
	if len(f) < 2 {
		return 0, false
	}
	return input.ParseUint(f[1])
}
