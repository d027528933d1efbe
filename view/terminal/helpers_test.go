package terminal

import (
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// The tests here use SYNTHETIC intervals built in code, with known events,
// so that every cell, label and footer number can be checked by hand;
// end-to-end tests on the real files of testdata/ live with cmd/latscope.

// cest is a fixed zone so that dates print with an offset.
var cest = time.FixedZone("CEST", 2*3600)

// t0 is the start of the synthetic recordings.
var t0 = time.Date(2024, 1, 2, 3, 4, 5, 0, cest)

var (
	readKey  = stream.Key{Event: "db file sequential read", Instance: "orcl1"}
	writeKey = stream.Key{Event: "log file parallel write", Instance: "orcl1"}
	idleKey  = stream.Key{Event: "SQL*Net message from client", Instance: "orcl1"}
)

// events maps a series to its event latencies in microseconds.
type events map[stream.Key][]float64

// synthetic returns one interval of source "s" starting i seconds after t0,
// one second long, holding the given events (exact histograms in µs).
func synthetic(t testing.TB, i int, ev events) stream.Interval {
	t.Helper()
	iv := stream.Interval{Source: "s", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second}
	for k, vals := range ev {
		h := hist.NewExact(hist.Microsecond, 0)
		for _, v := range vals {
			if err := h.Record(v); err != nil {
				t.Fatal(err)
			}
		}
		iv.Series = append(iv.Series, stream.SeriesHist{Key: k, Hist: h})
	}
	return iv
}

// knownGrid is a 4-column grid of one series:
//
//	column 0: ten 100 µs reads (row 64µs) and one 5 ms read (row 4.1ms)
//	column 1: observed, no events
//	column 2: not observed (a gap)
//	column 3: two 200 µs reads (row 128µs)
func knownGrid(t testing.TB) *stream.Grid {
	g := stream.NewGrid(time.Second)
	g.Add(synthetic(t, 0, events{readKey: {100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 5000}}))
	g.Add(synthetic(t, 1, nil))
	g.Add(synthetic(t, 3, events{readKey: {200, 200}}))
	return g
}

// visible strips CSI escape sequences (ESC [ parameters final-byte).
func visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != 0x1b || i+1 >= len(s) || s[i+1] != '[' {
			b.WriteByte(s[i])
			continue
		}
		i += 2
		for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
			i++
		}
	}
	return b.String()
}

// checkFits fails when a screen has more than h lines or a line wider than w
// visible cells.
func checkFits(t testing.TB, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(screen, "\n"), "\n")
	if screen == "" {
		lines = nil
	}
	if len(lines) > h {
		t.Errorf("%d×%d: %d lines", w, h, len(lines))
	}
	for i, l := range lines {
		if n := width(visible(l)); n > w {
			t.Errorf("%d×%d: line %d has %d cells: %q", w, h, i+1, n, visible(l))
		}
	}
}
