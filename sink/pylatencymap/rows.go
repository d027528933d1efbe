package pylatencymap

import (
	"math"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// rows sums the interval's histograms of the written event into buckets
// N = 2^e of the stream's unit; events says whether any series had events.
// The first series met fixes the event and the unit.
func (w *Writer) rows(iv stream.Interval) (rows [maxExp + 1]float64, events bool) {
	for _, s := range iv.Series {
		if s.Hist == nil || s.Hist.Validate() != nil {
			w.warn.Once("invalid", "skipped an invalid histogram of %s in %s", s.Key, iv.Source)
			continue
		}
		if !w.chosen {
			w.choose(s)
		}
		if s.Key.Event != w.key.Event {
			w.warn.Once("events", "PyLatencyMap draws one series: only event %q is written; %q and any other "+
				"events are dropped (choose one with --event)", w.key.Event, s.Key.Event)
			continue
		}
		if s.Key != w.key {
			w.warn.Once("sum", "the instances and sources of %q are summed into one record stream, as gv$ records "+
				"sum RAC instances", w.key.Event)
		}
		if s.Hist.Empty() {
			continue
		}
		events = true
		if !addRows(&rows, s.Hist, w.unit) {
			w.warn.Once("rebin", "histograms rebinned into power-of-two buckets of whole %s; PyLatencyMap cannot hold "+
				"finer buckets", unitName(w.unit))
		}
	}
	return rows, events
}

// choose fixes the event and the unit from the first series, and writes the
// records that waited for them.
func (w *Writer) choose(s stream.SeriesHist) {
	w.chosen, w.key = true, s.Key
	switch s.Hist.Unit {
	case hist.Nanosecond, hist.Microsecond, hist.Millisecond:
		w.unit = s.Hist.Unit
	default:
		w.unit = hist.Millisecond // PyLatencyMap has no seconds
	}
	if len(w.waiting) > 0 {
		w.writeWaiting() // an error sticks in w.err
	}
}

// addRows adds h's counts to rows in PyLatencyMap's Oracle buckets of unit:
// row e = N = 2^e counts [2^(e-1), 2^e), row 0 = N = 1 counts [0, 1). It
// reports whether that was exact: h was a scale-0 grid in unit whose buckets
// all lie at or above 1 unit (or in a zero bucket [0, 1)) and below 2^63.
func addRows(rows *[maxExp + 1]float64, h *hist.Histogram, unit hist.Unit) (exact bool) {
	g := h
	exact = true
	if h.IsCustom() || h.Scale != 0 || h.Unit != unit {
		g, exact = hist.Rebin(h, unit, 0), false
	}
	if g.ZeroCount > 0 {
		exact = addZero(rows, g.ZeroCount, g.ZeroPow) && exact
	}
	for j, c := range g.Counts {
		if c == 0 {
			continue
		}
		e := g.Offset + j + 1 // grid bucket i = [2^i, 2^(i+1)) is N = 2^(i+1)
		switch {
		case e < 1:
			e, exact = 0, false // below 1 unit: folded into [0, 1)
		case e > maxExp:
			e, exact = maxExp, false
		}
		rows[e] += c
	}
	return exact
}

// addZero adds the zero bucket [0, 2^zeroPow): whole into [0, 1) when it
// lies inside it, else spread evenly over [0, 1), [1, 2), ... as hist.Rebin
// spreads a zero bucket.
func addZero(rows *[maxExp + 1]float64, count float64, zeroPow int) (exact bool) {
	if zeroPow <= 0 {
		rows[0] += count
		return zeroPow == 0
	}
	width := math.Ldexp(1, zeroPow)
	rows[0] += count / width
	for k := 0; k < zeroPow; k++ {
		rows[min(k+1, maxExp)] += count * math.Ldexp(1, k) / width
	}
	return false
}
