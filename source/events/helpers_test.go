package events

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

// events returns the number of events of every interval, gaps and quiet
// intervals included, as "start+duration:count".
func (r result) timeline() []string {
	var out []string
	for _, iv := range r.intervals {
		n := 0.0
		for _, s := range iv.Series {
			n += s.Hist.Count()
		}
		out = append(out, fmt.Sprintf("%s+%s:%g", iv.Start.UTC().Format("15:04:05.000"), iv.Duration, n))
	}
	return out
}

// total merges every histogram of a series (all series when event is "").
func (r result) total(event string) (count, sumNanos float64) {
	for _, iv := range r.intervals {
		for _, s := range iv.Series {
			if event == "" || s.Key.Event == event {
				count += s.Hist.Count()
				sumNanos += s.Hist.Unit.Nanos(s.Hist.Sum)
			}
		}
	}
	return count, sumNanos
}

// run reads an input through a format, checking every interval.
func run(t testing.TB, f source.Format, name string, r io.Reader, opts source.Options) result {
	t.Helper()
	log := &bytes.Buffer{}
	diag := source.NewDiagnostics(log, 1000)
	src, err := f.Open(source.Input{Name: name, Reader: r, Diag: diag}, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	res := result{diag: diag, log: log}
	res.err = src.Run(context.Background(), func(iv stream.Interval) error {
		checkInterval(t, iv)
		res.intervals = append(res.intervals, iv)
		return nil
	})
	if res.err != nil {
		t.Fatalf("Run: %v", res.err)
	}
	return res
}

func runString(t testing.TB, f source.Format, input string, opts source.Options) result {
	t.Helper()
	return run(t, f, "synthetic.txt", strings.NewReader(input), opts)
}

func runFile(t testing.TB, f source.Format, path string, opts source.Options) result {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	return run(t, f, path, fh, opts)
}

// checkInterval asserts what every emitted interval must satisfy.
func checkInterval(t testing.TB, iv stream.Interval) {
	t.Helper()
	if err := iv.Validate(); err != nil {
		t.Fatalf("invalid interval: %v", err)
	}
	if iv.Gap {
		t.Fatalf("per-event sources never emit gaps (%s)", iv.Start)
	}
	for _, s := range iv.Series {
		h := s.Hist
		if h.ZeroCount < 0 || h.Sum < 0 || math.IsNaN(h.Sum) || !h.SumExact || h.Empty() {
			t.Fatalf("series %s at %s: zero %g sum %g exact %v count %g", s.Key, iv.Start, h.ZeroCount, h.Sum, h.SumExact, h.Count())
		}
		if h.Scale != hist.ExactScale {
			t.Fatalf("series %s at %s: scale %d, want the exact grid", s.Key, iv.Start, h.Scale)
		}
	}
}
