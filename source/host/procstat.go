package host

import "bytes"

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

// statSnap is what /proc/stat says: the CPU lines (all first) and the
// task counts.
type statSnap struct {
	cpus                       []cpuTimes
	procsRunning, procsBlocked uint64
	hasProcs                   bool
}

// parseStat reads /proc/stat into s. Kernels before 2.6.33 have fewer
// states: missing ones read as 0.
func parseStat(b []byte, s *statSnap) []problem {
	var probs []problem
	var buf [24][]byte
	f := buf[:0]
	n := 0
	s.hasProcs = false
	lines(b, func(ln int, line []byte) {
		// Only the cpu and procs_ lines: intr and softirq have hundreds
		// of fields, not worth splitting every second.
		if !bytes.HasPrefix(line, []byte("cpu")) && !bytes.HasPrefix(line, []byte("procs_")) {
			return
		}
		f = splitFields(f, line)
		if len(f) == 0 {
			return
		}
		switch {
		case bytes.HasPrefix(f[0], []byte("cpu")):
			if len(f) < 5 {
				probs = append(probs, problem{ln, "a cpu line with fewer than 4 states"})
				return
			}
			var t cpuTimes
			for i := 1; i < len(f) && i <= cpuStates; i++ {
				v, ok := parseUint(f[i])
				if !ok {
					probs = append(probs, problem{ln, "cpu state " + string(f[i]) + " is not a number"})
					return
				}
				t.ticks[i-1] = v
			}
			if n < len(s.cpus) {
				t.name = s.cpus[n].name
			}
			if len(f[0]) == 3 {
				t.name = "all"
			} else {
				t.name = intern(t.name, f[0])
			}
			if n < len(s.cpus) {
				s.cpus[n] = t
			} else {
				s.cpus = append(s.cpus, t)
			}
			n++
		case bytes.Equal(f[0], []byte("procs_running")), bytes.Equal(f[0], []byte("procs_blocked")):
			v, ok := uintField(f)
			if !ok {
				probs = append(probs, problem{ln, string(f[0]) + " without a number"})
				return
			}
			if f[0][6] == 'r' {
				s.procsRunning = v
			} else {
				s.procsBlocked = v
			}
			s.hasProcs = true
		}
	})
	s.cpus = s.cpus[:n]
	return probs
}

// uintField reads the number of a "name value" line.
func uintField(f [][]byte) (uint64, bool) {
	if len(f) < 2 {
		return 0, false
	}
	return parseUint(f[1])
}
