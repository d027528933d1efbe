package tracehist

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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

// malformed returns "name:line: reason" for every reported problem.
func (r result) malformed() []string {
	var out []string
	for _, sp := range r.Diag.Problems() {
		for _, p := range sp.First {
			out = append(out, p.String())
		}
	}
	return out
}

// series returns the histograms of one series, one per interval holding it.
func (r result) series(k stream.Key) []*hist.Histogram {
	var out []*hist.Histogram
	for _, iv := range r.Intervals {
		for _, s := range iv.Series {
			if s.Key == k {
				out = append(out, s.Hist)
			}
		}
	}
	return out
}

// total returns the events of every interval.
func (r result) total() float64 {
	n := 0.0
	for _, iv := range r.Intervals {
		n += eventCount(iv)
	}
	return n
}

// eventCount returns the events of an interval.
func eventCount(iv stream.Interval) float64 {
	n := 0.0
	for _, s := range iv.Series {
		n += s.Hist.Count()
	}
	return n
}

// formatByName returns one of this package's formats.
func formatByName(t testing.TB, name string) source.Format {
	t.Helper()
	for _, f := range Formats() {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no format %q", name)
	return source.Format{}
}

// run reads an input through a format and checks every interval the way
// source.RunAll would, and that each follows the previous one on the same
// clock without overlap.
func run(t testing.TB, format, name string, r io.Reader, opts source.Options) result {
	t.Helper()
	res := result{sourcetest.Run(t, formatByName(t, format), source.Input{Name: name, Reader: r}, opts)}
	for i := 1; i < len(res.Intervals); i++ {
		iv, prev := res.Intervals[i], res.Intervals[i-1]
		if iv.Start.Before(prev.End()) || iv.Relative != prev.Relative {
			t.Fatalf("interval %s+%s (relative %v) after %s+%s (relative %v): overlap or clock switch",
				iv.Start, iv.Duration, iv.Relative, prev.Start, prev.Duration, prev.Relative)
		}
	}
	return res
}

// runString reads a synthetic input.
func runString(t testing.TB, format, input string, opts source.Options) result {
	t.Helper()
	return run(t, format, "synthetic.txt", strings.NewReader(input), opts)
}

// readTestdata returns a file of this package's testdata (real samples).
func readTestdata(t testing.TB, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// readShared returns a file of the shared real test data.
func readShared(t testing.TB, rel string) string {
	t.Helper()
	data, err := os.ReadFile(testenv.DataFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// bucketsOf returns "[lo,hi)=count" for every non-empty bucket.
func bucketsOf(h *hist.Histogram) string {
	var parts []string
	for _, b := range h.Buckets() {
		parts = append(parts, fmt.Sprintf("[%g,%g)=%g", b.Lower, b.Upper, b.Count))
	}
	return strings.Join(parts, " ")
}

// Independent readings of the raw text, written without the parser's code:
// the count column of every row of a tool's tables.
var (
	arrowRowRE   = regexp.MustCompile(`(?m)^\s*\d+ -> \d+\s*: (\d+)\s+\|[*+# ]*\|\s*$`)
	bracketRowRE = regexp.MustCompile(`(?m)^[\[(][^|]*[)\]]\s+(\d+) \|[@ ]*\|\s*$`)
	valueRowRE   = regexp.MustCompile(`(?m)^\s*-?\d+ \|[@ ]*\s(\d+)\s*$`)
)

// sumColumn adds the first group of every match.
func sumColumn(re *regexp.Regexp, text string) float64 {
	n := 0.0
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			panic(err)
		}
		n += v
	}
	return n
}

// section returns the lines of text from the line starting with from up
// to (not including) the next line starting with "# " or "./" (the next
// command of an example file), i.e. one captured run.
func section(t testing.TB, text, from string) string {
	t.Helper()
	i := strings.Index(text, "\n"+from)
	if i < 0 {
		t.Fatalf("no line starting %q", from)
	}
	rest := text[i+1:]
	nl := strings.IndexByte(rest, '\n')
	body := rest[nl+1:]
	end := len(body)
	for _, m := range []string{"\n# ", "\n./"} {
		if j := strings.Index(body, m); j >= 0 && j < end {
			end = j + 1
		}
	}
	return body[:end]
}
