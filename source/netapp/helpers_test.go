package netapp

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// result is what one Run produced.
type result struct {
	intervals []stream.Interval
	diag      *source.Diagnostics
	log       *bytes.Buffer
	err       error
}

// malformed returns "line: reason" for every reported problem.
func (r result) malformed() []string {
	var out []string
	for _, sp := range r.diag.Problems() {
		for _, p := range sp.First {
			out = append(out, fmt.Sprintf("%d: %s", p.Line, p.Reason))
		}
	}
	return out
}

// runString reads an input through the format, checking every interval.
func runString(t testing.TB, input string, opts source.Options) result {
	t.Helper()
	log := &bytes.Buffer{}
	diag := source.NewDiagnostics(log, 1000)
	src, err := Format().Open(source.Input{Name: "stats.txt", Reader: strings.NewReader(input), Diag: diag}, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	res := result{diag: diag, log: log}
	res.err = src.Run(context.Background(), func(iv stream.Interval) error {
		checkInterval(t, iv)
		res.intervals = append(res.intervals, iv)
		return nil
	})
	return res
}

// checkInterval asserts what every emitted interval must satisfy.
func checkInterval(t testing.TB, iv stream.Interval) {
	t.Helper()
	if err := iv.Validate(); err != nil {
		t.Fatalf("invalid interval: %v", err)
	}
	if iv.Gap && len(iv.Series) > 0 {
		t.Fatalf("gap interval at %s carries series", iv.Start)
	}
	for _, s := range iv.Series {
		if s.Hist.ZeroCount < 0 || s.Hist.Sum < 0 || math.IsNaN(s.Hist.Sum) {
			t.Fatalf("negative count or sum in %s at %s", s.Key, iv.Start)
		}
		for _, c := range s.Hist.Counts {
			if c < 0 || math.IsNaN(c) {
				t.Fatalf("negative count in %s at %s", s.Key, iv.Start)
			}
		}
	}
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
