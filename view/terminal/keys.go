package terminal

import (
	"io"
	"time"

	"github.com/latscope/latscope/view/heatmap"
)

// keyAction is what a key asks of the loop.
type keyAction int

const (
	keyNone keyAction = iota
	keyRedraw
	keyQuit
)

// Bytes with a meaning of their own in raw mode.
const (
	ctrlC  = 3
	escKey = 0x1b
)

// escapeState follows terminal escape sequences (arrow keys send ESC [ C)
// so their bytes are not taken for commands.
type escapeState int

const (
	escNone escapeState = iota
	escStarted
	escSequence
)

// startKeys reads key bytes from r on a goroutine until r fails or done is
// closed; nil when there are no keys.
func startKeys(r io.Reader, done <-chan struct{}) <-chan byte {
	if r == nil {
		return nil
	}
	keys := make(chan byte, 16)
	go func() {
		buf := make([]byte, 64)
		for {
			n, err := r.Read(buf)
			for _, b := range buf[:n] {
				select {
				case keys <- b:
				case <-done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return keys
}

// handleKey applies one key byte: space pauses, f/i/b pick the maps, l
// toggles the log scale, n/p (or the right/left arrows) switch series, q
// and Ctrl-C quit.
func (v *viewer) handleKey(b byte) keyAction {
	switch v.escape {
	case escStarted:
		if b == '[' || b == 'O' {
			v.escape = escSequence
			return keyNone
		}
		v.escape = escNone
	case escSequence:
		if b < 0x40 || b > 0x7e {
			return keyNone // parameter bytes
		}
		v.escape = escNone
		switch b {
		case 'C':
			b = 'n'
		case 'D':
			b = 'p'
		default:
			return keyNone
		}
	}
	switch b {
	case escKey:
		v.escape = escStarted
		return keyNone
	case 'q', 'Q', ctrlC:
		return keyQuit
	case ' ':
		v.togglePause()
	case 'f', 'F':
		v.show = FrequencyOnly
	case 'i', 'I':
		v.show = IntensityOnly
	case 'b', 'B':
		v.show = Both
	case 'l', 'L':
		if v.scale == heatmap.Log {
			v.scale = heatmap.Linear
		} else {
			v.scale = heatmap.Log
		}
	case 'n', 'N':
		v.switchSeries(1)
	case 'p', 'P':
		v.switchSeries(-1)
	default:
		return keyNone
	}
	return keyRedraw
}

// togglePause pauses or resumes. A paused replay stops reading the feed; a
// paused live view keeps reading it but freezes the columns shown.
func (v *viewer) togglePause() {
	v.paused = !v.paused
	now := time.Now()
	if v.paused {
		v.pausedAt = now
		if !v.o.Replay {
			_, last, ok := v.grid.Columns()
			v.end, v.hasEnd = last, ok
		}
		return
	}
	if v.o.Replay {
		// The recorded clock stood still while paused.
		v.replayStart = v.replayStart.Add(now.Sub(v.pausedAt))
	} else {
		v.hasEnd = false
	}
}
