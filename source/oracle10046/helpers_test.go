package oracle10046

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// Real trace files, relative to testdata/. The Apress ones may not be
// redistributed: testenv.DataFile reads them from the shared test data and
// skips without it, so only tests about those very files use them; the
// others read the repository's 12.2, 19.x and 23c traces.
const (
	dirApress  = "trc10046/apress-top1e_10.2.0.3_11.1.0.6/"
	dirFree    = "trc10046/carymillsap-tracing-oracle_23.2/"
	dirJKStill = "trc10046/jkstill-trace-combine_12.2.0.1/"
	dirPriitp2 = "trc10046/priitp2-trctools_19.x/"

	fileDBM11106 = dirApress + "DBM11106_ora_6334.trc"
	fileTkprof   = dirApress + "DBM11106_ora_6334_tkprof.txt"
	fileTVD      = dirApress + "DBM11106_ora_6334_tvdxtat.html"
	fileDBM10203 = dirApress + "dbm10203_ora_24433.trc"
	fileS000     = dirApress + "dbm10203_s000_24374.trc"
	fileFree     = dirFree + "FREE_ora_39079.trc"
	fileFree01   = dirFree + "FREE_ora_39079_test01.trc"
	file9850     = dirJKStill + "js122a1_ora_9850.trc"
	file9854     = dirJKStill + "js122a1_ora_9854.trc"
	fileTrcsess  = dirJKStill + "main_trcsess_output.trc"
	fileTwoStmts = dirPriitp2 + "two_statements_one_cursor.trc"

	// The WAIT lines of those traces (grep -c '^WAIT #').
	waits9850     = 40
	waitsTwoStmts = 30
)

// result is what one Run produced.
type result = sourcetest.Result

// run reads data through the format and validates every interval the way
// source.RunAll does.
func run(t testing.TB, name string, data []byte, opts source.Options) result {
	t.Helper()
	return runReader(t, name, bytes.NewReader(data), opts)
}

func runReader(t testing.TB, name string, r io.Reader, opts source.Options) result {
	t.Helper()
	res := sourcetest.Run(t, Format(), source.Input{Name: name, Reader: r}, opts)
	for _, iv := range res.Intervals {
		if iv.Source != name {
			t.Errorf("interval source %q, want %q", iv.Source, name)
		}
	}
	return res
}

// readShared returns the bytes of a real test file (testenv.DataFile: the
// repository's, or the shared copy of a file that may not be redistributed).
func readShared(t testing.TB, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(testenv.DataFile(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// allTraces lists every .trc file of testdata/trc10046 (and the Apress ones
// when the shared test data is present).
func allTraces(t testing.TB) []string {
	t.Helper()
	rels := testenv.DataFiles(t, "trc10046/*/*.trc")
	// 12 traces are in the repository; 3 more are read from the shared
	// test data when it is present (testdata/README.md).
	if len(rels) < 12 {
		t.Fatalf("expected at least the 12 real traces of testdata/trc10046, found %d", len(rels))
	}
	return rels
}

// eventTotals sums, per event name, the counts and exact sums (µs) of every
// interval.
type eventTotal struct {
	count float64
	sum   float64
}

func totals(ivs []stream.Interval) map[string]eventTotal {
	out := map[string]eventTotal{}
	for _, iv := range ivs {
		for _, s := range iv.Series {
			e := out[s.Key.Event]
			e.count += s.Hist.Count()
			e.sum += s.Hist.Sum
			out[s.Key.Event] = e
		}
	}
	return out
}

// merged returns, per event, the merge of all its histograms.
func merged(ivs []stream.Interval) map[string]*hist.Histogram {
	out := map[string]*hist.Histogram{}
	for _, iv := range ivs {
		for _, s := range iv.Series {
			if out[s.Key.Event] == nil {
				out[s.Key.Event] = hist.NewExact(hist.Microsecond, 0)
			}
			out[s.Key.Event].Merge(s.Hist)
		}
	}
	return out
}

// waitLineRe matches the WAIT lines of real traces the way a reader of the
// file would, independently of the parser: event name and ela.
var waitLineRe = regexp.MustCompile(`(?m)^WAIT #\d+: nam='(.*?)' ela= ?(\d+) .* tim=\d+\r?$`)

// grepWaits counts, per event, the lines containing nam='<event>' (what
// grep -c "nam='<event>'" prints) and sums their ela values.
func grepWaits(text string) map[string]eventTotal {
	out := map[string]eventTotal{}
	for _, m := range waitLineRe.FindAllStringSubmatch(text, -1) {
		var ela float64
		fmt.Sscan(m[2], &ela)
		e := out[m[1]]
		e.sum += ela
		out[m[1]] = e
	}
	for ev := range out {
		e := out[ev]
		e.count = float64(strings.Count(text, "nam='"+ev+"'"))
		out[ev] = e
	}
	return out
}

// windowKey is an interval's window.
type windowKey struct {
	start string
	dur   time.Duration
}

// byWindow sums counts and sums per (window, event).
func byWindow(ivs []stream.Interval) map[windowKey]map[string]eventTotal {
	out := map[windowKey]map[string]eventTotal{}
	for _, iv := range ivs {
		k := windowKey{iv.Start.UTC().Format(time.RFC3339Nano), iv.Duration}
		if out[k] == nil {
			out[k] = map[string]eventTotal{}
		}
		for _, s := range iv.Series {
			e := out[k][s.Key.Event]
			e.count += s.Hist.Count()
			e.sum += s.Hist.Sum
			out[k][s.Key.Event] = e
		}
	}
	return out
}

// describe prints intervals for failure messages.
func describe(ivs []stream.Interval) string {
	var b strings.Builder
	for _, iv := range ivs {
		fmt.Fprintf(&b, "%s +%s rel=%v:", iv.Start.Format(time.RFC3339Nano), iv.Duration, iv.Relative)
		names := []string{}
		for _, s := range iv.Series {
			names = append(names, fmt.Sprintf(" %s=%g", s.Key, s.Hist.Count()))
		}
		sort.Strings(names)
		b.WriteString(strings.Join(names, ","))
		b.WriteByte('\n')
	}
	return b.String()
}

func zurich(t testing.TB) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation("Europe/Zurich")
	if err != nil {
		return time.FixedZone("CET", 3600) // no tzdata: the traces are from winter
	}
	return loc
}
