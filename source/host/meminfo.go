package host

import (
	"bytes"

	"github.com/latscope/latscope/input"
)

// The /proc/meminfo fields sar -r ALL and sar -S read (in kB).
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
	miSwapFree
	miSwapCached
	miAnonPages
	miSlab
	miKernelStack
	miPageTables
	miVmallocUsed
	miFields
)

var meminfoNames = [miFields]string{"MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SReclaimable",
	"Active", "Inactive", "Dirty", "Committed_AS", "SwapTotal", "SwapFree", "SwapCached", "AnonPages", "Slab",
	"KernelStack", "PageTables", "VmallocUsed"}

// memSnap is what /proc/meminfo says of the fields sar -r reads; have
// marks those present.
type memSnap struct {
	kb   [miFields]uint64
	have [miFields]bool
}

// parseMeminfo reads /proc/meminfo ("Name:   value kB").
func parseMeminfo(b []byte, m *memSnap) []problem {
	*m = memSnap{}
	return parseNamed(b, meminfoNames[:], ':', m.kb[:], m.have[:])
}

// The /proc/vmstat counters sar -B and -W read.
const (
	vmPgpgin = iota
	vmPgpgout
	vmPgfault
	vmPgmajfault
	vmPswpin
	vmPswpout
	vmPgfree
	vmPgscanKswapd
	vmPgscanDirect
	vmPgstealKswapd
	vmPgstealDirect
	vmFields
)

var vmstatNames = [vmFields]string{"pgpgin", "pgpgout", "pgfault", "pgmajfault", "pswpin", "pswpout", "pgfree",
	"pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct"}

// vmSnap holds the /proc/vmstat counters; have marks those present.
type vmSnap struct {
	c    [vmFields]uint64
	have [vmFields]bool
}

// parseVmstat reads /proc/vmstat ("name value").
func parseVmstat(b []byte, v *vmSnap) []problem {
	*v = vmSnap{}
	return parseNamed(b, vmstatNames[:], 0, v.c[:], v.have[:])
}

// parseNamed reads the lines "NAME[suffix] VALUE [unit]" of b whose name is
// one of names into values and have (same order): /proc/meminfo's and
// /proc/vmstat's shape. suffix 0: the name stands alone.
func parseNamed(b []byte, names []string, suffix byte, values []uint64, have []bool) []problem {
	var probs []problem
	var buf [4][]byte
	lines(b, func(ln int, line []byte) {
		f := splitFields(buf[:0], line)
		if len(f) == 0 {
			return
		}
		name, ok := f[0], len(f) >= 2
		if suffix != 0 {
			name, ok = bytes.CutSuffix(f[0], []byte{suffix})
			ok = ok && len(f) >= 2
		}
		if !ok {
			probs = append(probs, problem{ln, "not a \"name value\" line"})
			return
		}
		for i, want := range names {
			if string(name) != want {
				continue
			}
			v, ok := input.ParseUint(f[1])
			if !ok {
				probs = append(probs, problem{ln, want + " " + string(f[1]) + " is not a number"})
				return
			}
			values[i], have[i] = v, true
		}
	})
	return probs
}
