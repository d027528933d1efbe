package pylatencymap

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// result is what one Run produced.
type result struct{ sourcetest.Result }

// total merges every emitted histogram.
func (r result) total() *hist.Histogram {
	var h *hist.Histogram
	for _, iv := range r.Intervals {
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
	return result{sourcetest.Run(t, Format(), source.Input{Name: name, Reader: r}, opts)}
}

// runString reads a synthetic input.
func runString(t testing.TB, input string, opts source.Options) result {
	t.Helper()
	return run(t, "synthetic.txt", strings.NewReader(input), opts)
}

// runShared reads a real file from the shared test data.
func runShared(t testing.TB, rel string, opts source.Options) result {
	t.Helper()
	f, err := os.Open(testenv.DataFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	return run(t, name, f, opts)
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
