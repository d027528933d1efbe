// Package sourcetest runs a source format over an input in tests and checks
// every interval the way source.RunAll would, and writes intervals through a
// sink format, so that each format's tests only say what is particular to
// the format.
package sourcetest

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// Result is what one Run produced.
type Result struct {
	Intervals []stream.Interval
	Diag      *input.Diagnostics
	// Log holds what the diagnostics printed (first problems, warnings).
	Log *bytes.Buffer
	// Err is what the source's Run returned.
	Err error
}

// Malformed returns "line: reason" for every reported problem.
func (r Result) Malformed() []string {
	var out []string
	for _, sp := range r.Diag.Problems() {
		for _, p := range sp.First {
			out = append(out, fmt.Sprintf("%d: %s", p.Line, p.Reason))
		}
	}
	return out
}

// Run opens in (its Diag is set here) with f and runs it to the end,
// checking every interval with CheckInterval.
func Run(t testing.TB, f source.Format, in source.Input, opts source.Options) Result {
	t.Helper()
	log := &bytes.Buffer{}
	in.Diag = input.NewDiagnostics(log, 1000)
	src, err := f.Open(in, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if src.Name() != in.Name {
		t.Errorf("Name() = %q, want %q", src.Name(), in.Name)
	}
	res := Result{Diag: in.Diag, Log: log}
	res.Err = src.Run(context.Background(), func(iv stream.Interval) error {
		CheckInterval(t, iv)
		res.Intervals = append(res.Intervals, iv)
		return nil
	})
	return res
}

// CheckInterval fails the test on an interval no source may emit: invalid,
// a gap carrying series, negative or NaN counts and sums.
func CheckInterval(t testing.TB, iv stream.Interval) {
	t.Helper()
	if err := iv.Validate(); err != nil {
		t.Fatalf("invalid interval: %v", err)
	}
	if iv.Gap && len(iv.Series) > 0 {
		t.Fatalf("gap interval at %s carries series", iv.Start)
	}
	for _, s := range iv.Series {
		h := s.Hist
		if h.ZeroCount < 0 || h.Sum < 0 || math.IsNaN(h.Sum) {
			t.Fatalf("negative count or sum in %s at %s", s.Key, iv.Start)
		}
		for _, c := range h.Counts {
			if c < 0 || math.IsNaN(c) {
				t.Fatalf("negative count in %s at %s", s.Key, iv.Start)
			}
		}
	}
}

// ReadShared reads a file of the shared real test data through f; the
// file must read without errors or malformed lines.
func ReadShared(t testing.TB, f source.Format, rel string, opts source.Options) []stream.Interval {
	t.Helper()
	data, err := os.ReadFile(testenv.DataFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	res := Run(t, f, source.Input{Name: rel, Reader: bytes.NewReader(data)}, opts)
	if res.Err != nil {
		t.Fatalf("%s: %v", rel, res.Err)
	}
	if bad := res.Malformed(); len(bad) > 0 {
		t.Fatalf("%s: malformed input: %q", rel, bad)
	}
	return res.Intervals
}

// WriteAll writes the intervals with a sink format and returns the output.
func WriteAll(t testing.TB, f sink.Format, ivs []stream.Interval) []byte {
	t.Helper()
	out, _ := WriteAllWarned(t, f, ivs)
	return out
}

// WriteAllWarned is WriteAll that also returns the writer's warnings (what
// the format could not hold).
func WriteAllWarned(t testing.TB, f sink.Format, ivs []stream.Interval) ([]byte, []string) {
	t.Helper()
	var buf bytes.Buffer
	diag := input.NewDiagnostics(nil, 100)
	w, err := f.New(&buf, sink.Options{Name: "out" + f.Extension, Diag: diag})
	if err != nil {
		t.Fatal(err)
	}
	for _, iv := range ivs {
		if err := w.Write(iv); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), diag.Warnings()
}
