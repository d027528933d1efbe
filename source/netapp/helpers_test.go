package netapp

import (
	"fmt"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// result is what one Run produced.
type result = sourcetest.Result

// runString reads an input through the format, checking every interval.
func runString(t testing.TB, input string, opts source.Options) result {
	t.Helper()
	return sourcetest.Run(t, Format(), source.Input{Name: "stats.txt", Reader: strings.NewReader(input)}, opts)
}

// counts is one histogram's 36 bucket values in ONTAP's label order.
type counts [36]float64

// plus returns c with d added bucket by bucket.
func (c counts) plus(d counts) counts {
	for i := range c {
		c[i] += d[i]
	}
	return c
}

// synthetic: the block `stats show -r` prints for one histogram counter of
// one volume, one "object:instance:counter.label:value" line per bucket in
// ONTAP's label order, as the PyLatencyMap NetApp connector parsed it.
func block(vol, counter string, c counts) string {
	var b strings.Builder
	for i, label := range bucketLabels {
		fmt.Fprintf(&b, "volume:%s:%s.%s:%g\n", vol, counter, label, c[i])
	}
	return b.String()
}

// series finds a series of an interval.
func series(iv stream.Interval, event, instance string) *stream.SeriesHist {
	for i, s := range iv.Series {
		if s.Key.Event == event && s.Key.Instance == instance {
			return &iv.Series[i]
		}
	}
	return nil
}

// slotCounts reads a histogram back into label order.
func slotCounts(s *stream.SeriesHist) counts {
	var c counts
	if s == nil {
		return c
	}
	c[0] = s.Hist.ZeroCount
	for i, n := range s.Hist.Counts {
		c[i+1] = n
	}
	return c
}
