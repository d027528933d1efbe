package host

import (
	"bytes"

	"github.com/latscope/latscope/input"
)

// Fields of a /proc/net/dev line after "name:".
const (
	ndRxBytes = iota
	ndRxPackets
	ndRxErrs
	ndRxDrop
	ndRxFifo
	ndRxFrame
	ndRxCompressed
	ndRxMulticast
	ndTxBytes
	ndTxPackets
	ndTxErrs
	ndTxDrop
	ndTxFifo
	ndTxColls
	ndTxCarrier
	ndTxCompressed
	ndFields
)

// ifCounters are one interface's line of /proc/net/dev.
type ifCounters struct {
	name string
	c    [ndFields]uint64
}

// parseNetDev reads /proc/net/dev (two header lines, then "name: 16
// counters") into ifs (reused).
func parseNetDev(b []byte, ifs []ifCounters) ([]ifCounters, []problem) {
	var probs []problem
	var buf [24][]byte
	f := buf[:0]
	n := 0
	lines(b, func(ln int, line []byte) {
		name, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			if ln > 2 && len(bytes.TrimSpace(line)) > 0 {
				probs = append(probs, problem{ln, "no interface name"})
			}
			return
		}
		if ln <= 2 {
			return // the headers have no colon, but be sure
		}
		f = splitFields(f, rest)
		if len(f) < ndFields {
			probs = append(probs, problem{ln, "fewer than 16 counters"})
			return
		}
		var c ifCounters
		if p, ok := parseCounters(c.c[:], f, ln, "counter"); !ok {
			probs = append(probs, p)
			return
		}
		var at *ifCounters
		at, ifs = slot(ifs, n)
		c.name = intern(at.name, bytes.TrimSpace(name))
		*at = c
		n++
	})
	return ifs[:n], probs
}

// parseRetransSegs reads Tcp RetransSegs from /proc/net/snmp: a "Tcp:"
// line of names, then one of values.
func parseRetransSegs(b []byte) (uint64, bool, []problem) {
	var probs []problem
	var nbuf, buf [24][]byte
	names, f := nbuf[:0], buf[:0]
	col := -1
	var v uint64
	found := false
	lines(b, func(ln int, line []byte) {
		if found || !bytes.HasPrefix(line, []byte("Tcp:")) {
			return
		}
		if col < 0 {
			names = splitFields(names, line)
			for i, nm := range names {
				if bytes.Equal(nm, []byte("RetransSegs")) {
					col = i
				}
			}
			if col < 0 {
				probs = append(probs, problem{ln, "Tcp: without RetransSegs"})
				found = true // nothing more to read
			}
			return
		}
		f = splitFields(f, line)
		if col >= len(f) {
			probs = append(probs, problem{ln, "Tcp: values shorter than their names"})
		} else if x, ok := input.ParseUint(f[col]); !ok {
			probs = append(probs, problem{ln, "RetransSegs " + string(f[col]) + " is not a number"})
		} else {
			v = x
		}
		found = true
	})
	return v, found && len(probs) == 0, probs
}
