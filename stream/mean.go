package stream

import (
	"fmt"
	"math"
	"slices"

	"github.com/latscope/latscope/hist"
)

// SeriesMean is a series the source can only report as a count and a total
// per window, with no distribution: pg_stat_statements calls and
// total_exec_time, pg_stat_database blk_read_time over blks_read, or a host
// figure (a Quantity) such as r/s or %util. Views draw its mean as a line
// beside the heat maps; turning it into a histogram at the mean would invent
// a distribution the source never measured.
type SeriesMean struct {
	Key Key
	// Count is the number of events (calls, block reads) in the window, or
	// the denominator of a Quantity (seconds, elapsed ms).
	Count float64
	// Sum is their total latency in Unit, or the numerator of a Quantity.
	Sum  float64
	Unit hist.Unit
	// Quantity is what Sum/Count measures: Latency (empty) for latencies;
	// any other has Unit QuantityUnit.
	Quantity Quantity
}

// Mean returns the mean: a latency in nanoseconds, or Sum/Count in the
// series' Quantity (NaN without events).
func (m SeriesMean) Mean() float64 {
	if m.Count <= 0 {
		return math.NaN()
	}
	return m.Unit.Nanos(m.Sum) / m.Count
}

// Validate checks a mean series as a source must emit it.
func (m SeriesMean) Validate() error {
	if !m.Quantity.Valid() {
		return fmt.Errorf("mean series %s: unknown quantity %q", m.Key, m.Quantity)
	}
	if !m.Quantity.IsLatency() && m.Unit != QuantityUnit {
		return fmt.Errorf("mean series %s: a %s series has unit %s, not %s", m.Key, m.Quantity, m.Unit, QuantityUnit)
	}
	if !m.Unit.Valid() {
		return fmt.Errorf("mean series %s: %w: %d", m.Key, hist.ErrBadUnit, int64(m.Unit))
	}
	if !finiteNonNegative(m.Count) || !finiteNonNegative(m.Sum) {
		return fmt.Errorf("mean series %s: count %v and sum %v must be finite and not negative", m.Key, m.Count, m.Sum)
	}
	return nil
}

func finiteNonNegative(v float64) bool { return v >= 0 && !math.IsInf(v, 1) }

// mergeMeans adds b's mean series into a copy of a, summing equal keys.
func mergeMeans(a, b []SeriesMean) []SeriesMean {
	out := slices.Clone(a)
	for _, mb := range b {
		j := slices.IndexFunc(out, func(m SeriesMean) bool { return m.Key == mb.Key })
		if j < 0 {
			out = append(out, mb)
			continue
		}
		out[j] = out[j].Plus(mb)
	}
	return out
}

// Plus sums two reports of one series, converting b to m's unit.
func (m SeriesMean) Plus(b SeriesMean) SeriesMean {
	m.Count += b.Count
	m.Sum += b.Sum * float64(b.Unit) / float64(m.Unit)
	return m
}
