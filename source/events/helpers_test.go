package events

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
)

// result is what one Run produced.
type result struct{ sourcetest.Result }

// events returns the number of events of every interval, gaps and quiet
// intervals included, as "start+duration:count".
func (r result) timeline() []string {
	var out []string
	for _, iv := range r.Intervals {
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
	for _, iv := range r.Intervals {
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
	res := result{sourcetest.Run(t, f, source.Input{Name: name, Reader: r}, opts)}
	if res.Err != nil {
		t.Fatalf("Run: %v", res.Err)
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
