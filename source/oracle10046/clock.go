package oracle10046

import "time"

// tim is an opaque microsecond clock (epoch-like in 11g, about 321 days off
// in 10.2, uptime-like from 12c), so it is never read as a date: every
// "***" timestamp is tied to the tim of the next line that has one, and
// wall(tim) = stamp + (tim − thatTim) until the next timestamp.

// clockMode says how tims become times.
type clockMode int

const (
	// clockHolding: no timestamp yet; waits are held until one arrives.
	clockHolding clockMode = iota
	// clockWall: anchored to "***" timestamps.
	clockWall
	// clockRelative: no timestamp came; time counts from the first wait.
	clockRelative
)

// maxHeld is how many waits are held while waiting for the first
// timestamp; beyond it the trace is read on relative time.
const maxHeld = 100000

// heldWait is one parsed WAIT line.
type heldWait struct {
	tim, ela int64
	series   int32
	line     int
	// brk says a new file's header came before this wait.
	brk bool
}

// anchor ties a tim to a wall-clock time (µs since the Unix epoch).
type anchor struct {
	wall int64
	tim  int64
	loc  *time.Location
}

// resolveStamp ties the pending timestamp to tim.
func (p *parser) resolveStamp(tim int64) error {
	p.pending = false
	if p.clock == clockRelative {
		return nil // committed to relative time: a late timestamp cannot move what was emitted
	}
	p.bin.setAnchor(anchor{wall: p.pendingAt.UnixMicro(), tim: tim, loc: p.pendingAt.Location()})
	if p.clock == clockHolding {
		p.clock = clockWall
		return p.replayHeld()
	}
	return nil
}

// onWait places a wait, or holds it while no timestamp has been seen.
func (p *parser) onWait(w heldWait) error {
	w.brk, p.boundary = p.boundary, false
	if p.clock == clockHolding {
		if len(p.held) < maxHeld {
			p.held = append(p.held, w)
			return nil
		}
		p.diag.Warn(p.name, "no timestamp line before the first %d waits: times are relative to the first wait", maxHeld)
		if err := p.startRelative(w.tim); err != nil {
			return err
		}
	}
	return p.place(w)
}

func (p *parser) place(w heldWait) error {
	placed, err := p.bin.add(w, p.keep[w.series])
	if err != nil {
		return err
	}
	if !placed {
		p.diag.Malformed(p.name, w.line, "tim is too far from the last timestamp line to place the wait")
	}
	return nil
}

// startRelative reads the trace on time relative to its first wait.
func (p *parser) startRelative(firstTim int64) error {
	if len(p.held) > 0 {
		firstTim = p.held[0].tim
	}
	p.clock = clockRelative
	p.bin.setRelative()
	p.bin.setAnchor(anchor{wall: 0, tim: firstTim, loc: time.UTC})
	return p.replayHeld()
}

func (p *parser) replayHeld() error {
	held := p.held
	p.held = nil
	for _, w := range held {
		if err := p.place(w); err != nil {
			return err
		}
	}
	return nil
}

// finish places held waits on relative time if no timestamp ever came and
// emits the intervals still open.
func (p *parser) finish() error {
	if p.clock == clockHolding && len(p.held) > 0 {
		p.diag.Warn(p.name, "no timestamp lines: times are relative to the first wait")
		if err := p.startRelative(0); err != nil {
			return err
		}
	}
	return p.bin.endRun()
}
