package host

import (
	"bytes"

	"github.com/latscope/latscope/input"
)

// psiTotals are the cumulative stall times in µs of one /proc/pressure
// file; have marks the lines present (cpu "full" only since 5.13).
type psiTotals struct {
	some, full         uint64
	haveSome, haveFull bool
}

// parsePressure reads a /proc/pressure file: "some|full avg10=… total=US".
func parsePressure(b []byte, p *psiTotals) []problem {
	*p = psiTotals{}
	var probs []problem
	var buf [24][]byte
	f := buf[:0]
	lines(b, func(ln int, line []byte) {
		f = splitFields(f, line)
		if len(f) == 0 {
			return
		}
		var total []byte
		for _, x := range f[1:] {
			if v, ok := bytes.CutPrefix(x, []byte("total=")); ok {
				total = v
			}
		}
		v, ok := input.ParseUint(total)
		if !ok {
			probs = append(probs, problem{ln, "no total=MICROSECONDS"})
			return
		}
		switch string(f[0]) {
		case "some":
			p.some, p.haveSome = v, true
		case "full":
			p.full, p.haveFull = v, true
		default:
			probs = append(probs, problem{ln, "neither some nor full"})
		}
	})
	return probs
}

// loadSnap is /proc/loadavg: the load averages, running and total tasks.
type loadSnap struct {
	avg            [3]float64
	running, tasks uint64
}

// parseLoadavg reads /proc/loadavg: "0.52 0.58 0.59 2/1234 5678".
func parseLoadavg(b []byte, l *loadSnap) []problem {
	var buf [8][]byte
	f := splitFields(buf[:0], bytes.TrimSpace(b))
	if len(f) < 4 {
		return badLoadavg()
	}
	for i := range 3 {
		v, ok := parseDecimal(f[i])
		if !ok {
			return badLoadavg()
		}
		l.avg[i] = v
	}
	run, tasks, ok := bytes.Cut(f[3], []byte{'/'})
	r, ok1 := input.ParseUint(run)
	t, ok2 := input.ParseUint(tasks)
	if !ok || !ok1 || !ok2 {
		return badLoadavg()
	}
	l.running, l.tasks = r, t
	return nil
}

func badLoadavg() []problem {
	return []problem{{1, "not \"L1 L5 L15 RUNNING/TASKS LASTPID\""}}
}
