package awr

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// The fixtures in testdata/ are SYNTHETIC: no real AWR export or V$ poll can
// be made without an Oracle server. They are built exactly like the output
// of the queries in sql/ (see testdata/PROVENANCE.md).

// result is what one Run produced.
type result = sourcetest.Result

// mode says how a test reads an input: batch (a regular file: ModTime set)
// or stream (a pipe).
type mode int

const (
	batch mode = iota
	streamed
)

func (m mode) String() string { return [...]string{"batch", "stream"}[m] }

var modes = []mode{batch, streamed}

// run reads an input and checks every interval the way source.RunAll
// would; Oracle snapshots always have wall-clock times.
func run(t testing.TB, name string, r io.Reader, m mode, opts source.Options) result {
	t.Helper()
	in := source.Input{Name: name, Reader: r}
	if m == batch {
		in.ModTime = time.Date(2024, 3, 16, 0, 0, 0, 0, time.UTC)
	}
	res := sourcetest.Run(t, Format(), in, opts)
	for _, iv := range res.Intervals {
		if iv.Relative {
			t.Fatalf("interval at %s is relative: Oracle snapshots have wall-clock times", iv.Start)
		}
	}
	return res
}

// runFile reads a fixture of testdata/.
func runFile(t testing.TB, file string, m mode, opts source.Options) result {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return run(t, file, f, m, opts)
}

// runString reads an inline synthetic input.
func runString(t testing.TB, input string, m mode, opts source.Options) result {
	t.Helper()
	return run(t, "synthetic.csv", strings.NewReader(input), m, opts)
}

// sorted returns the intervals ordered by start, then source (batch order).
func sorted(ivs []stream.Interval) []stream.Interval {
	out := slices.Clone(ivs)
	slices.SortStableFunc(out, func(a, b stream.Interval) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.Source, b.Source)
	})
	return out
}

// series returns an interval's histogram of an event (nil when absent).
func series(iv stream.Interval, event string) *hist.Histogram {
	for _, s := range iv.Series {
		if s.Key.Event == event {
			return s.Hist
		}
	}
	return nil
}

// bucketCounts returns "lower-upper:count" for every non-empty bucket.
func bucketCounts(h *hist.Histogram) []string {
	if h == nil {
		return nil
	}
	var out []string
	for _, b := range h.Buckets() {
		s := fmt.Sprintf("%g-%g:%g", b.Lower, b.Upper, b.Count)
		if b.Capped {
			s += " capped"
		}
		out = append(out, s)
	}
	return out
}

// upperBoundRows are "bound:count" rows of an Oracle histogram delta, the
// smallest bound first (read as the zero bucket).
type upperBoundRows []struct {
	bound, count float64
}

// estimatedSum is the sum the bucket midpoints give: N/2 per wait in the
// lowest bucket [0, N), 0.75·N in [N/2, N), 0.75·2P = 1.5·P in the open top
// [P, 2P). Computed here independently of the histogram code.
func estimatedSum(rows upperBoundRows, zeroBound float64) float64 {
	sum := 0.0
	for _, r := range rows {
		if r.bound == zeroBound {
			sum += r.count * r.bound / 2
		} else {
			sum += r.count * 0.75 * r.bound
		}
	}
	return sum
}

// windowText renders an interval as "source start+duration" (or "gap ...")
// with the start in UTC.
func windowText(iv stream.Interval) string {
	kind := ""
	if iv.Gap {
		kind = " gap"
	}
	return fmt.Sprintf("%s %s+%s%s", iv.Source, iv.Start.UTC().Format("2006-01-02 15:04:05.000000"), iv.Duration, kind)
}

func windows(ivs []stream.Interval) []string {
	out := make([]string, len(ivs))
	for i, iv := range ivs {
		out[i] = windowText(iv)
	}
	return out
}

func total(ivs []stream.Interval, inst, event string) float64 {
	n := 0.0
	for _, iv := range ivs {
		for _, s := range iv.Series {
			if s.Key.Instance == inst && (event == "" || s.Key.Event == event) {
				n += s.Hist.Count()
			}
		}
	}
	return n
}

func equalLists(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}
