package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// diffJSON mirrors the parts of the diff JSON the tests read.
type diffJSON struct {
	Tests  int `json:"tests"`
	Series []struct {
		Event       string   `json:"event"`
		In          string   `json:"in"`
		CountA      float64  `json:"count_a"`
		CountB      float64  `json:"count_b"`
		Factor      *float64 `json:"factor"`
		Significant bool     `json:"significant"`
		Grid        string   `json:"grid"`
		GridExact   bool     `json:"grid_exact"`
		Test        *struct {
			P         float64 `json:"p"`
			PAdjusted float64 `json:"p_adjusted"`
		} `json:"test"`
		Percentiles []struct {
			Q     float64  `json:"q"`
			Ratio *float64 `json:"ratio"`
		} `json:"percentiles"`
	} `json:"series"`
}

func runDiff(t *testing.T, args ...string) diffJSON {
	t.Helper()
	r := run(t, "", append([]string{"diff", "--format", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("diff %v: exit %d\n%s", args, r.code, r.stderr)
	}
	var d diffJSON
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("diff %v: %v\n%s", args, err, r.stdout)
	}
	return d
}

// The shipped recording's two halves (36 and 35 windows of ~3 s).
var halves = []string{"--a-to", "2013-08-26T16:28:38+02:00", "--b-from", "2013-08-26T16:28:38+02:00"}

// shiftedCopy writes the PyLatencyMap recording with every bucket value
// doubled: each event twice as slow (Oracle's bucket N is [N/2, N) ms, so
// the histograms move up one power of two).
func shiftedCopy(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^(\d+), (\d+)$`)
	out := row.ReplaceAllStringFunc(string(data), func(l string) string {
		m := row.FindStringSubmatch(l)
		n, _ := strconv.Atoi(m[1])
		return strconv.Itoa(2*n) + ", " + m[2]
	})
	if out == string(data) {
		t.Fatal("no bucket row rewritten")
	}
	shifted := filepath.Join(t.TempDir(), "shifted_latency_data.txt")
	if err := os.WriteFile(shifted, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return shifted
}

// TestDiffRealRecording: the two halves of the shipped stationary
// recording are not flagged; with B's half twice as slow the shift is
// flagged and its factor recovered: the halves' own factor × 2, exactly
// (the interpolated percentiles move with the buckets), so within the
// bucket resolution.
func TestDiffRealRecording(t *testing.T) {
	data := testenv.DataFile(t, "pylatencymap/example_latency_data.txt")
	same := runDiff(t, append([]string{data}, halves...)...)
	if len(same.Series) != 1 || same.Series[0].In != "both" || same.Series[0].Test == nil {
		t.Fatalf("halves: %+v", same)
	}
	s := same.Series[0]
	t.Logf("halves: p %.3g, factor ×%.4f", s.Test.PAdjusted, *s.Factor)
	if s.Significant || s.Test.PAdjusted < 0.01 {
		t.Errorf("the halves of a stationary recording are flagged: p %g", s.Test.PAdjusted)
	}
	if s.CountA+s.CountB != 1237243 {
		t.Errorf("halves hold %g events, the recording 1237243", s.CountA+s.CountB)
	}
	shifted := runDiff(t, append([]string{data, shiftedCopy(t, data)}, halves...)...)
	sh := shifted.Series[0]
	t.Logf("B ×2: p %.3g, factor ×%.4f", sh.Test.PAdjusted, *sh.Factor)
	if !sh.Significant {
		t.Errorf("B twice as slow is not flagged: p %g", sh.Test.PAdjusted)
	}
	if got := *sh.Factor / *s.Factor; math.Abs(got-2) > 1e-9 {
		t.Errorf("factor ×%g against the halves' ×%g: ratio %g, want 2", *sh.Factor, *s.Factor, got)
	}
	if math.Abs(math.Log2(*sh.Factor)-1) > 0.1 {
		t.Errorf("factor ×%g, want ×2 within the bucket resolution", *sh.Factor)
	}
	for _, p := range sh.Percentiles[:3] {
		if math.Abs(math.Log2(*p.Ratio)-1) > 0.1 {
			t.Errorf("p%g ratio ×%g, want ≈ ×2", 100*p.Q, *p.Ratio)
		}
	}
}

// TestDiffDifferentEdges: the recording against itself as Prometheus
// classic buckets (custom edges in seconds) is compared exactly on the
// common edges, without a shift.
func TestDiffDifferentEdges(t *testing.T) {
	data := testenv.DataFile(t, "pylatencymap/example_latency_data.txt")
	prom := filepath.Join(t.TempDir(), "latency.prom")
	if r := run(t, "", "convert", data, "--to", "prometheus", "-o", prom); r.code != 0 {
		t.Fatalf("convert: %s", r.stderr)
	}
	d := runDiff(t, data, prom)
	s := d.Series[0]
	if !s.GridExact || !strings.Contains(s.Grid, "custom edges in s") || s.Significant || s.Test.P < 0.99 || s.CountA != s.CountB {
		t.Errorf("same data on two layouts: %+v %+v", s, s.Test)
	}
}

// TestDiffOutputsAndErrors: table, CSV and HTML; series on one side only;
// usage errors exit 2; a missing file is named.
func TestDiffOutputsAndErrors(t *testing.T) {
	data := testenv.DataFile(t, "pylatencymap/example_latency_data.txt")
	calib := testenv.DataFile(t, "pylatencymap/calibration_data.txt")
	table := run(t, "", append([]string{"diff", data}, halves...)...)
	for _, want := range []string{"A: ", "B: ", "p99.9", "95 % interval", "grid: both sides' own buckets: powers of two in ms", "  —\n"} {
		if !strings.Contains(table.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, table.stdout)
		}
	}
	one := run(t, "", "diff", data, calib)
	if one.code != 0 || !strings.Contains(one.stdout, "only in A") || !strings.Contains(one.stdout, "only in B") {
		t.Errorf("series on one side only: exit %d\n%s%s", one.code, one.stdout, one.stderr)
	}
	dir := t.TempDir()
	page, csvPath := filepath.Join(dir, "diff.html"), filepath.Join(dir, "diff.csv")
	for _, out := range []string{page, csvPath} {
		if r := run(t, "", append([]string{"diff", data, shiftedCopy(t, data), "-o", out}, halves...)...); r.code != 0 {
			t.Fatalf("-o %s: %s", out, r.stderr)
		}
	}
	html, _ := os.ReadFile(page)
	for _, want := range []string{"Content-Security-Policy", "<svg", "SIGNIFICANT", "Difference heat map", "share of events per bucket"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(string(html), "<script") {
		t.Error("the page has a script")
	}
	csv, _ := os.ReadFile(csvPath)
	if lines := strings.Split(strings.TrimSpace(string(csv)), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "event,instance,in,count_a") || !strings.Contains(lines[1], ",true,") {
		t.Errorf("csv:\n%s", csv)
	}
	for _, args := range [][]string{
		{"diff"}, {"diff", data}, {"diff", data, data, data}, {"diff", data, data, "--format", "xml"},
		{"diff", data, data, "--alpha", "2"}, {"diff", data, data, "--correction", "fdr"},
		{"diff", data, "--a-from", "2013-08-26T16:29:00Z", "--a-to", "2013-08-26T16:28:00Z", "--b-from", "2013-08-26T16:28:00Z"},
		{"diff", data, "--a-to", "2013-08-26T16:28:38Z", "--b-from", "2013-08-26T16:28:38Z", "--from", "-1d"},
	} {
		if r := run(t, "", args...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args[1:], r.code, r.stderr)
		}
	}
	missing := filepath.Join(dir, "nope.txt")
	if r := run(t, "", "diff", data, missing); r.code != 1 || !strings.Contains(r.stderr, missing) {
		t.Errorf("missing B: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, "", "diff", data, "--a-to", "2000-01-01T00:00:00Z", "--b-from", "2000-01-02T00:00:00Z", "--b-to", "2000-01-03T00:00:00Z"); r.code != 1 || !strings.Contains(r.stderr, "neither A") {
		t.Errorf("empty windows: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, "", "diff", data, "--a-to", "2000-01-01T00:00:00Z", "--b-from", "2000-01-02T00:00:00Z"); r.code != 0 || !strings.Contains(r.stderr, "A (") || !strings.Contains(r.stdout, "only in B") {
		t.Errorf("empty A: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if h := run(t, "", "diff", "--help"); h.code != 0 || !strings.Contains(h.stdout, "Examples:") {
		t.Errorf("diff --help: exit %d", h.code)
	}
}

// TestDiffDocExample: every line docs/diff.md shows of its examples is in
// the output of the command it shows.
func TestDiffDocExample(t *testing.T) { checkDocExamples(t, "diff.md", 2) }

// fioBinLower is the lower edge in ns of fio's latency bin idx (fio 3.x
// stat.h: 64 linear bins per power of two from 128 ns).
func fioBinLower(idx int) uint64 {
	if idx < 128 {
		return uint64(idx)
	}
	e := uint(idx>>6) - 1
	return uint64(1)<<(e+6) + uint64(idx%64)<<e
}

// fioBin returns the bin of v ns and the value fio prints for it as the
// json+ key (the bin's midpoint above 128 ns).
func fioBin(v uint64) (idx int, key uint64) {
	if v < 128 {
		return int(v), v
	}
	msb := 63 - bits.LeadingZeros64(v)
	e := msb - 6
	idx = (e+1)<<6 + int(v>>uint(e)&63)
	return idx, fioBinLower(idx) + uint64(1)<<(uint(idx>>6)-2)
}

// TestDiffFioAgainstPyLatencyMap: the same synthetic latencies (seeded
// lognormal, median 4.5 ms) written as a fio json+ result (1856 bins in ns)
// and as PyLatencyMap records of Oracle buckets in µs (which nest in fio's
// bins: exact) and in ms (which do not: split) show no shift, and a
// factor of 1 within 2 %.
func TestDiffFioAgainstPyLatencyMap(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 19))
	const n = 20000
	bins := map[uint64]int{}
	pow2 := map[string]map[uint64]int{"microsec": {}, "millisec": {}}
	for range n {
		ns := uint64(math.Exp(1.5+r.NormFloat64()) * 1e6)
		_, key := fioBin(ns)
		bins[key]++
		for unit, per := range map[string]float64{"microsec": 1e3, "millisec": 1e6} {
			// Oracle's bucket N counts [N/2, N): N is the power of two above.
			v := float64(ns) / per
			upper := uint64(1)
			for float64(upper) <= v {
				upper *= 2
			}
			pow2[unit][upper]++
		}
	}
	dir := t.TempDir()
	var keys []string
	for k, c := range bins {
		keys = append(keys, fmt.Sprintf("%q:%d", strconv.FormatUint(k, 10), c))
	}
	fioJSON := filepath.Join(dir, "fio.json")
	body := fmt.Sprintf("fio-3.33\n{\"fio version\":\"fio-3.33\",\"timestamp\":1700000000,\"jobs\":[{\"jobname\":\"read\",\"read\":{\"clat_ns\":{\"N\":%d,\"bins\":{%s}}}}]}\n", n, strings.Join(keys, ","))
	if err := os.WriteFile(fioJSON, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	fioEvent := runDiff(t, fioJSON, fioJSON).Series[0].Event
	for unit, counts := range pow2 {
		var rec strings.Builder
		for i, scale := range []int{0, 1} {
			fmt.Fprintf(&rec, "<begin record>\ntimestamp, microsec, %d, t\nlabel, %s\nlatencyunit, %s\ndatasource, oracle\n", 1700000000000000+int64(i)*10000000, fioEvent, unit)
			var ups []uint64
			for u := range counts {
				ups = append(ups, u)
			}
			slices.Sort(ups)
			for _, u := range ups {
				fmt.Fprintf(&rec, "%d, %d\n", u, scale*counts[u])
			}
			rec.WriteString("<end record>\n")
		}
		pyl := filepath.Join(dir, unit+".txt")
		if err := os.WriteFile(pyl, []byte(rec.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		d := runDiff(t, pyl, fioJSON)
		if len(d.Series) != 1 || d.Series[0].In != "both" {
			t.Fatalf("%s: series %+v", unit, d.Series)
		}
		s := d.Series[0]
		t.Logf("%s vs fio: %s; p %.3g, factor ×%.4f", unit, s.Grid, s.Test.P, *s.Factor)
		if s.Significant || s.Test.P < 0.01 || math.Abs(*s.Factor-1) > 0.02 || s.CountA != n || s.CountB != n {
			t.Errorf("%s vs fio, the same latencies: p %g, factor ×%g, counts %g/%g", unit, s.Test.P, *s.Factor, s.CountA, s.CountB)
		}
		if s.GridExact != (unit == "microsec") {
			t.Errorf("%s vs fio: grid exact %v: %s", unit, s.GridExact, s.Grid)
		}
	}
}

// TestDiffMatchEvent: two real traces of different databases share no
// series by event and instance; by event alone they share their SQL*Net
// events, the counts of each side's instances summed.
func TestDiffMatchEvent(t *testing.T) {
	a := testenv.DataFile(t, "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc")
	b := testenv.DataFile(t, "trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc")
	for _, s := range runDiff(t, a, b).Series {
		if s.In == "both" {
			t.Errorf("%s is on both sides with its instance", s.Event)
		}
	}
	both := 0
	for _, s := range runDiff(t, a, b, "--match", "event").Series {
		if s.In == "both" {
			both++
			if s.Event == "SQL*Net message from client" && (s.CountA != 2 || s.CountB != 4) {
				t.Errorf("%s: %g and %g events, want 2 and 4", s.Event, s.CountA, s.CountB)
			}
		}
	}
	if both != 2 {
		t.Errorf("%d events on both sides by name, want 2 (SQL*Net message from/to client)", both)
	}
	if r := run(t, "", "diff", a, b, "--match", "source"); r.code != 2 {
		t.Errorf("--match source: exit %d", r.code)
	}
	if r := run(t, "", "diff", "-", "-"); r.code != 2 {
		t.Errorf("diff - -: exit %d", r.code)
	}
}
