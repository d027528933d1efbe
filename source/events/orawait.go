package events

import (
	"fmt"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// waitLine is one line of Canali's bcc ora_wait_trace.py:
// "HH:MM:SS pid=N event=NAME wait_time=US".
type waitLine struct {
	clock time.Duration // time of day
	event string
	wait  float64
}

// clockShape says s is written like a time of day: "H:MM:SS" or
// "HH:MM:SS", optionally with a fraction of a second.
func clockShape(s string) bool {
	hh, rest, ok1 := strings.Cut(s, ":")
	mm, ss, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 || len(hh) < 1 || len(hh) > 2 || len(mm) != 2 || len(ss) < 2 {
		return false
	}
	frac, hasFrac := strings.CutPrefix(ss[2:], ".")
	return digitsOnly(hh) && digitsOnly(mm) && digitsOnly(ss[:2]) && (hasFrac || ss[2:] == "") && digitsOnly(frac)
}

// parseClock reads a time of day of clockShape; ok is false when it is out
// of range.
func parseClock(s string) (time.Duration, bool) {
	if !clockShape(s) {
		return 0, false
	}
	hh, rest, _ := strings.Cut(s, ":")
	mm, ss, _ := strings.Cut(rest, ":")
	secs, ok := parseNanos(ss, 1e9)
	h, m := atoi2(hh), atoi2(mm)
	if !ok || h > 23 || m > 59 || secs >= 61e9 {
		return 0, false
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(secs), true
}

func atoi2(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// startsWithClock says the line is meant as a wait line (and is malformed
// when parseWaitLine rejects it); other lines are the tool's chatter.
func startsWithClock(line string) bool {
	f, _, _ := strings.Cut(strings.TrimLeft(line, " \t"), " ")
	return clockShape(f)
}

// parseWaitLine reads a wait line. The event name runs from "event=" to
// " wait_time=" and may hold spaces; the pid is not needed.
func parseWaitLine(line string) (w waitLine, reason string) {
	line = strings.TrimSpace(line)
	first, rest, _ := strings.Cut(line, " ")
	if !clockShape(first) {
		return w, "no HH:MM:SS time first"
	}
	clock, ok := parseClock(first)
	if !ok {
		return w, fmt.Sprintf("time of day %q is out of range", first)
	}
	ev := strings.Index(rest, "event=")
	wt := strings.LastIndex(rest, " wait_time=")
	if ev < 0 || wt < ev {
		return w, "want event=NAME wait_time=US after the time"
	}
	name := strings.TrimSpace(rest[ev+len("event=") : wt])
	if name == "" {
		return w, "empty event name"
	}
	value, _, _ := strings.Cut(strings.TrimSpace(rest[wt+len(" wait_time="):]), " ")
	v, ok := parseLatency(value)
	if !ok {
		return w, fmt.Sprintf("wait_time %q is not a non-negative number", value)
	}
	return waitLine{clock: clock, event: name, wait: v}, ""
}

// waitParser turns wait lines into per-event intervals on the wall clock.
type waitParser struct {
	name string
	diag *input.Diagnostics
	opts source.Options
	emit func(stream.Interval) error
	unit hist.Unit

	day     time.Time // midnight of the first line's day
	days    int       // days added by midnight wraps
	prev    time.Duration
	started bool
	bin     *binner
	lineNo  int
	warned  bool
}

func newWaitParser(in source.Input, opts source.Options, emit func(stream.Interval) error) *waitParser {
	d := opts.Day(in)
	p := &waitParser{name: in.Name, diag: in.Diag, opts: opts, emit: emit, unit: hist.Microsecond,
		day: time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, opts.Loc())}
	if opts.Unit != 0 {
		p.unit = opts.Unit
	}
	p.bin = newBinner(in.Name, opts.Interval, false, opts.Loc(), func() {
		if !p.warned {
			p.warned = true
			p.diag.Warn(p.name, "time goes backwards at line %d; what follows starts a new run", p.lineNo)
		}
	}, emit)
	return p
}

// line handles input line n.
func (p *waitParser) Line(n int, text string, tooLong bool) error {
	if tooLong || !startsWithClock(text) {
		return nil
	}
	w, reason := parseWaitLine(text)
	if reason != "" {
		p.diag.Malformed(p.name, n, reason)
		return nil
	}
	// The lines carry no date: a time of day more than 12 hours before
	// the previous one is past midnight.
	if p.started && w.clock < p.prev-12*time.Hour {
		p.days++
	}
	p.prev, p.started = w.clock, true
	if !p.opts.KeepEvent(w.event) {
		return nil
	}
	// Built field by field, so that a DST change that day moves nothing.
	c := w.clock
	at := time.Date(p.day.Year(), p.day.Month(), p.day.Day()+p.days,
		int(c/time.Hour), int(c%time.Hour/time.Minute), int(c%time.Minute/time.Second), int(c%time.Second), p.day.Location())
	t := at.UnixNano()
	if t < 0 || t > maxTime {
		p.diag.Malformed(p.name, n, "date out of range")
		return nil
	}
	p.lineNo = n
	return p.bin.add(t, stream.Key{Event: w.event}, w.wait, p.unit)
}

func (p *waitParser) finish() error { return p.bin.endRun() }

// End finishes the input (see input.LineParser).
func (p *waitParser) End(bool) error { return p.finish() }
