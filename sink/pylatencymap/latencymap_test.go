package pylatencymap

import (
	"bytes"
	"fmt"
	"math"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/oracle10046"
	plmsource "github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// latencyMap returns the command running PyLatencyMap v1.3 (PyPI package
// pylatencymap: a `latencymap` script, or the LatencyMap module).
func latencyMap(t *testing.T) []string {
	t.Helper()
	if p, err := exec.LookPath("latencymap"); err == nil {
		return []string{p}
	}
	if p, err := exec.LookPath("python3"); err == nil && exec.Command(p, "-c", "import LatencyMap").Run() == nil {
		return []string{p, "-m", "LatencyMap"}
	}
	testenv.SkipOrFail(t, "PyLatencyMap not installed (pip install pylatencymap==1.3.1)")
	return nil
}

// runLatencyMap feeds records to PyLatencyMap as a user would (colours, no
// delay) and returns what it printed.
func runLatencyMap(t *testing.T, cmd []string, feed []byte) (string, error) {
	t.Helper()
	c := exec.Command(cmd[0], append(cmd[1:], "--screen_delay", "0")...)
	c.Stdin = bytes.NewReader(feed)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	return out.String(), err
}

var (
	averageLine = regexp.MustCompile(`Average latency: (\S+) (\w+)\. `)
	sampleLine  = regexp.MustCompile(`Sample num: (\d+)\. Delta time: [0-9.]+ sec\. Date: (.*)`)
)

// TestLatencyMapDrawsTheOutput feeds the writer's output to PyLatencyMap
// itself: it must read every record to the end and print the average
// latency its own formula gives for the records (Oracle buckets weighted
// 0.75·N, which "datasource, oracle" selects).
func TestLatencyMapDrawsTheOutput(t *testing.T) {
	cmd := latencyMap(t)
	cases := map[string][]stream.Interval{
		"example_latency_data": sourcetest.ReadShared(t, plmsource.Format(), "pylatencymap/example_latency_data.txt", source.Options{}),
		"10046 trace": sourcetest.ReadShared(t, oracle10046.Format(), "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc",
			source.Options{Interval: time.Second, Events: []string{"db file sequential read"}}),
		"odd windows (synthetic)": oddIntervals(t),
	}
	for name, ivs := range cases {
		t.Run(name, func(t *testing.T) {
			feed, _ := convert(t, ivs)
			recs := parseRecords(t, feed)
			printed, err := runLatencyMap(t, cmd, feed)
			if err != nil || !strings.HasSuffix(strings.TrimSpace(printed), "Reached EOF from data source, exiting.") {
				t.Fatalf("PyLatencyMap failed (%v):\n%s", err, tail(printed, 2000))
			}
			samples := sampleLine.FindAllStringSubmatch(printed, -1)
			averages := averageLine.FindAllStringSubmatch(printed, -1)
			if len(samples) != len(recs) || len(averages) != len(recs) {
				t.Fatalf("%d frames, want one per record (%d)", len(samples), len(recs))
			}
			last := recs[len(recs)-1]
			if got := samples[len(samples)-1]; got[1] != fmt.Sprint(len(recs)) || got[2] != strings.ToUpper(last.date) {
				t.Errorf("last frame: sample %s date %q, want %d %q", got[1], got[2], len(recs), last.date)
			}
			want := pyFormat(pyAverage(recs))
			if got := averages[len(averages)-1]; got[1] != want || got[2] != last.unit {
				t.Errorf("PyLatencyMap prints an average latency of %s %s, its formula on the records gives %s %s", got[1], got[2], want, last.unit)
			}
			t.Logf("%d records; PyLatencyMap's average %s %s", len(recs), want, last.unit)
		})
	}
}

// TestLatencyMapCannotDrawCounterRestarts is why gaps are written as windows
// without events rather than as a counter restart: PyLatencyMap v1.3 turns
// the restart into a negative rate and stops on it.
func TestLatencyMapCannotDrawCounterRestarts(t *testing.T) {
	cmd := latencyMap(t)
	var feed strings.Builder
	// Synthetic: one bucket counting 0, 50, 100, then restarting at 0.
	for i, c := range []int{0, 50, 100, 0, 10} {
		fmt.Fprintf(&feed, "<begin record>\ntimestamp, microsec, %d, \nlabel, restart\nlatencyunit, millisec\n"+
			"datasource, oracle\n8, %d\n<end record>\n", 1e15+int64(i)*3e6, c)
	}
	printed, err := runLatencyMap(t, cmd, []byte(feed.String()))
	if err == nil {
		t.Fatalf("PyLatencyMap now draws counter restarts: the writer could write gaps as restarts\n%s", tail(printed, 500))
	}
	t.Logf("PyLatencyMap on a restart: %v: %s", err, tail(printed, 80))
}

// pyAverage is LatencyMap.py's "Average latency": over the records after the
// first, Σ 0.75·N·Δcount/Δt over Σ Δcount/Δt (Δt in s; 1 when not positive).
func pyAverage(recs []textRecord) float64 {
	var intensity, frequency float64
	for i := 1; i < len(recs); i++ {
		dt := float64(recs[i].usec-recs[i-1].usec) / 1e6
		if dt <= 0 {
			dt = 1
		}
		for n, c := range recs[i].rows {
			d := float64(c) - float64(recs[i-1].rows[n])
			frequency += d / dt
			intensity += 0.75 * d * float64(n) / dt
		}
	}
	if frequency <= 0 {
		return 0
	}
	return intensity / frequency
}

// pyFormat is LatencyMap.py's _fmt_value.
func pyFormat(v float64) string {
	switch {
	case v < 0:
		return "0"
	case v <= 9:
		return fmt.Sprintf("%.1g", v)
	case v < 1e6:
		return fmt.Sprint(int64(math.RoundToEven(v)))
	}
	return fmt.Sprintf("%.2g", v)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
