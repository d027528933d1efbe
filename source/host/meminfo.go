package host

import "bytes"

// The /proc/meminfo fields sar -r reads (in kB).
const (
	miMemTotal = iota
	miMemFree
	miMemAvailable
	miBuffers
	miCached
	miSReclaimable
	miActive
	miInactive
	miDirty
	miCommitted
	miSwapTotal
	miFields
)

var meminfoNames = [miFields]string{"MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SReclaimable",
	"Active", "Inactive", "Dirty", "Committed_AS", "SwapTotal"}

// memSnap is what /proc/meminfo says of the fields sar -r reads; have
// marks those present.
type memSnap struct {
	kb   [miFields]uint64
	have [miFields]bool
}

// parseMeminfo reads /proc/meminfo ("Name:   value kB").
func parseMeminfo(b []byte, m *memSnap) []problem {
	*m = memSnap{}
	var probs []problem
	var buf [24][]byte
	f := buf[:0]
	lines(b, func(ln int, line []byte) {
		f = splitFields(f, line)
		if len(f) == 0 {
			return
		}
		name, ok := bytes.CutSuffix(f[0], []byte{':'})
		if !ok || len(f) < 2 {
			probs = append(probs, problem{ln, "not a \"Name: value\" line"})
			return
		}
		for i, want := range meminfoNames {
			if string(name) == want {
				v, ok := parseUint(f[1])
				if !ok {
					probs = append(probs, problem{ln, want + " " + string(f[1]) + " is not a number"})
					return
				}
				m.kb[i], m.have[i] = v, true
			}
		}
	})
	return probs
}

// The /proc/vmstat counters sar -B and -W read.
const (
	vmPgpgin = iota
	vmPgpgout
	vmPgfault
	vmPgmajfault
	vmPswpin
	vmPswpout
	vmFields
)

var vmstatNames = [vmFields]string{"pgpgin", "pgpgout", "pgfault", "pgmajfault", "pswpin", "pswpout"}

// vmSnap holds the /proc/vmstat counters; have marks those present.
type vmSnap struct {
	c    [vmFields]uint64
	have [vmFields]bool
}

// parseVmstat reads /proc/vmstat ("name value").
func parseVmstat(b []byte, v *vmSnap) []problem {
	*v = vmSnap{}
	var probs []problem
	var buf [24][]byte
	f := buf[:0]
	lines(b, func(ln int, line []byte) {
		f = splitFields(f, line)
		if len(f) == 0 {
			return
		}
		if len(f) != 2 {
			probs = append(probs, problem{ln, "not a \"name value\" line"})
			return
		}
		for i, want := range vmstatNames {
			if string(f[0]) == want {
				x, ok := parseUint(f[1])
				if !ok {
					probs = append(probs, problem{ln, want + " " + string(f[1]) + " is not a number"})
					return
				}
				v.c[i], v.have[i] = x, true
			}
		}
	})
	return probs
}
