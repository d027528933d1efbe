package pylatencymap

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// result is what one Run produced.
type result struct {
	intervals []stream.Interval
	diag      *source.Diagnostics
	log       *bytes.Buffer // what the diagnostics printed
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

// total merges every emitted histogram.
func (r result) total() *hist.Histogram {
	var h *hist.Histogram
	for _, iv := range r.intervals {
		for _, s := range iv.Series {
			if h == nil {
				h = s.Hist.Clone()
				continue
			}
			h.Merge(s.Hist)
		}
	}
	if h == nil {
		return hist.NewBuckets(hist.Millisecond)
	}
	return h
}

// run reads an input through the format and checks every interval the way
// source.RunAll would.
func run(t testing.TB, name string, r io.Reader, opts source.Options) result {
	t.Helper()
	log := &bytes.Buffer{}
	diag := source.NewDiagnostics(log, 1000)
	src, err := Format().Open(source.Input{Name: name, Reader: r, Diag: diag}, opts)
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

// runString reads a synthetic input.
func runString(t testing.TB, input string, opts source.Options) result {
	t.Helper()
	return run(t, "synthetic.txt", strings.NewReader(input), opts)
}

// runShared reads a real file from the shared test data.
func runShared(t testing.TB, rel string, opts source.Options) result {
	t.Helper()
	f, err := os.Open(testenv.SharedFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	return run(t, name, f, opts)
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
		if s.Hist.ZeroCount < 0 || s.Hist.Sum < 0 {
			t.Fatalf("negative count or sum in %s at %s", s.Key, iv.Start)
		}
		for _, c := range s.Hist.Counts {
			if c < 0 || math.IsNaN(c) {
				t.Fatalf("negative count in %s at %s", s.Key, iv.Start)
			}
		}
	}
}

// rec writes one synthetic record. ts is the "timestamp, ..." value part
// ("" for none), header lines are given whole, data are "value, count" lines.
func rec(ts string, lines ...string) string {
	var b strings.Builder
	b.WriteString("<begin record>\n")
	if ts != "" {
		b.WriteString("timestamp, microsec, " + ts + "\n")
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	b.WriteString("<end record>\n")
	return b.String()
}

// eventCount returns the events of an interval.
func eventCount(iv stream.Interval) float64 {
	n := 0.0
	for _, s := range iv.Series {
		n += s.Hist.Count()
	}
	return n
}
