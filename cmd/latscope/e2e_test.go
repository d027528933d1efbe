package main

// End-to-end tests: the real binary, built once, run on the real files of
// testdata/ as a user would run it.

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

var binary string

func TestMain(m *testing.M) {
	if plan := os.Getenv(replayEnv); plan != "" {
		os.Exit(replayMain(plan)) // the test binary as a /proc replayer (procreplay_test.go)
	}
	dir, err := os.MkdirTemp("", "latscope-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "latscope")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		panic("building latscope: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runWith(t, stdin, nil, args...)
}

// runWith runs the binary with stdin and extra environment variables.
func runWith(t *testing.T, stdin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running latscope %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// jsonReport mirrors the parts of the report JSON the tests read.
type jsonReport struct {
	Series []struct {
		Event      string   `json:"event"`
		Instance   string   `json:"instance"`
		Source     string   `json:"source"`
		SourceUnit string   `json:"source_unit"`
		Count      float64  `json:"count"`
		SumUs      float64  `json:"sum_us"`
		SumExact   bool     `json:"sum_exact"`
		MeanUs     *float64 `json:"mean_us"`
		P50Us      *float64 `json:"p50_us"`
		P99Us      *float64 `json:"p99_us"`
		Buckets    []struct {
			LowerUs float64 `json:"lower_us"`
			UpperUs float64 `json:"upper_us"`
			Count   float64 `json:"count"`
			SumUs   float64 `json:"sum_us"`
		} `json:"buckets"`
		Intervals []struct {
			Start   *string `json:"start"`
			Seconds float64 `json:"seconds"`
			Count   float64 `json:"count"`
			Gap     bool    `json:"gap"`
		} `json:"intervals"`
	} `json:"series"`
	Sources []struct {
		Name      string `json:"name"`
		Malformed int    `json:"malformed_lines"`
	} `json:"sources"`
	Warnings []string `json:"warnings"`
}

func reportJSON(t *testing.T, args ...string) jsonReport {
	t.Helper()
	r := run(t, "", append([]string{"report", "--format", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("latscope report %v: exit %d\n%s", args, r.code, r.stderr)
	}
	var rep jsonReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, r.stdout)
	}
	return rep
}

func TestReportOracleEventHistogramRecords(t *testing.T) {
	f := testenv.DataFile(t, "pylatencymap/example_latency_data.txt")
	rep := reportJSON(t, f)
	if len(rep.Series) != 1 {
		t.Fatalf("%d series, want 1", len(rep.Series))
	}
	s := rep.Series[0]
	if s.Event != "db file sequential read latency data from gv$event_histogram" {
		t.Errorf("event %q (label kept verbatim, not lower-cased)", s.Event)
	}
	if s.Count != 1237243 {
		t.Errorf("count %v, want 1 237 243 waits over the recording", s.Count)
	}
	// Upper-bound buckets: about 11.2 ms (PyLatencyMap's ×1.5 gives 23 ms).
	if s.MeanUs == nil || math.Abs(*s.MeanUs-11200) > 100 {
		t.Errorf("mean %v µs, want about 11.2 ms", s.MeanUs)
	}
	if s.SumExact || s.SourceUnit != "ms" {
		t.Errorf("sum_exact %v unit %s", s.SumExact, s.SourceUnit)
	}
	if len(s.Intervals) != 71 {
		t.Errorf("%d intervals, want 71 (72 records, the first a baseline)", len(s.Intervals))
	}
	if first := s.Intervals[0].Start; first == nil || *first != "2013-08-26T16:26:51.653754+02:00" {
		t.Errorf("first interval starts %v", first)
	}
}

func TestReportCalibrationFactors(t *testing.T) {
	for _, c := range []struct {
		file   string
		factor float64
	}{{"calibration_data.txt", 1.5}, {"calibration_data_oracle.txt", 0.75}} {
		rep := reportJSON(t, testenv.DataFile(t, "pylatencymap/"+c.file))
		s := rep.Series[0]
		want := 0.0
		for n := 64.0; n <= 32768; n *= 2 {
			want += 2 * c.factor * n // +1 event per bucket per second, two 1 s intervals
		}
		if math.Abs(s.SumUs-want) > 1e-6 || s.Count != 20 {
			t.Errorf("%s: %v events, sum %v µs, want 20 and %v (factor %v)", c.file, s.Count, s.SumUs, want, c.factor)
		}
		for _, iv := range s.Intervals {
			if iv.Seconds != 1 {
				t.Errorf("%s: interval of %v s, want 1 (from the µs field)", c.file, iv.Seconds)
			}
		}
	}
}

// realTrace is a real Oracle 12.2 trace of the repository: 40 waits of 13
// events.
const realTrace = "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc"

// The report of a trace gives every event's wait count and exact ela sum,
// as counted in the raw file (grep -c "nam='EVENT'" and an awk sum of its
// ela= values), and puts the idle events last.
func TestReportTraceCountsEqualTheTrace(t *testing.T) {
	rep := reportJSON(t, testenv.DataFile(t, realTrace))
	type total struct{ n, sumUs float64 }
	want := map[string]total{
		"db file sequential read":     {7, 76526},
		"library cache load lock":     {1, 12811},
		"read by other session":       {1, 12748},
		"library cache lock":          {2, 1435},
		"library cache pin":           {2, 1327},
		"latch: shared pool":          {1, 1283},
		"gc current block 2-way":      {2, 1245},
		"gc cr grant 2-way":           {1, 356},
		"PGA memory operation":        {8, 187},
		"SQL*Net message to client":   {2, 3},
		"Disk file operations I/O":    {1, 3},
		"PL/SQL lock timer":           {10, 5005595},
		"SQL*Net message from client": {2, 1445},
	}
	got := map[string]total{}
	for _, s := range rep.Series {
		got[s.Event] = total{s.Count, s.SumUs}
		if !s.SumExact {
			t.Errorf("%s: trace sums must be exact", s.Event)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d series, want %d: %v", len(got), len(want), got)
	}
	for ev, w := range want {
		if got[ev] != w {
			t.Errorf("%s: %+v, want %+v", ev, got[ev], w)
		}
	}
	// Idle events last, by time waited: PL/SQL lock timer, then the client.
	if n := len(rep.Series); n < 2 || rep.Series[n-2].Event != "PL/SQL lock timer" || rep.Series[n-1].Event != "SQL*Net message from client" {
		t.Errorf("idle events not last: %+v", rep.Series)
	}
}

// The per-event wait counts of the 11.1 trace equal those of its TKPROF
// report (DBM11106_ora_6334_tkprof.txt).
func TestReportTraceMatchesTKPROFCounts(t *testing.T) {
	f := testenv.DataFile(t, "trc10046/apress-top1e_10.2.0.3_11.1.0.6/DBM11106_ora_6334.trc")
	rep := reportJSON(t, f)
	want := map[string]float64{"db file sequential read": 176, "db file scattered read": 225, "direct path write temp": 941,
		"direct path read temp": 941, "log file sync": 2, "SQL*Net message to client": 2, "SQL*Net message from client": 2}
	got := map[string]float64{}
	for _, s := range rep.Series {
		got[s.Event] = s.Count
	}
	for ev, n := range want {
		if got[ev] != n {
			t.Errorf("%s: %v waits, want %v", ev, got[ev], n)
		}
	}
}

func TestTrcsessMergeEqualsItsParts(t *testing.T) {
	dir := "trc10046/jkstill-trace-combine_12.2.0.1/"
	merged := reportJSON(t, testenv.DataFile(t, dir+"main_trcsess_output.trc"))
	parts := reportJSON(t, testenv.DataFile(t, dir+"js122a1_ora_9850.trc"), testenv.DataFile(t, dir+"js122a1_ora_9854.trc"))
	type tot struct{ n, sum float64 }
	sums := func(r jsonReport) map[string]tot {
		m := map[string]tot{}
		for _, s := range r.Series {
			m[s.Event] = tot{s.Count, s.SumUs}
		}
		return m
	}
	a, b := sums(merged), sums(parts)
	if len(a) == 0 || len(a) != len(b) {
		t.Fatalf("series: merged %d, parts %d", len(a), len(b))
	}
	for ev, x := range a {
		if b[ev] != x {
			t.Errorf("%s: merged %+v, parts %+v", ev, x, b[ev])
		}
	}
}

func TestByFileKeepsSourcesApart(t *testing.T) {
	dir := "trc10046/jkstill-trace-combine_12.2.0.1/"
	rep := reportJSON(t, "--by", "file", testenv.DataFile(t, dir+"js122a1_ora_9850.trc"), testenv.DataFile(t, dir+"js122a1_ora_9854.trc"))
	sources := map[string]bool{}
	for _, s := range rep.Series {
		sources[filepath.Base(s.Source)] = true
	}
	if !sources["js122a1_ora_9850.trc"] || !sources["js122a1_ora_9854.trc"] {
		t.Errorf("series sources %v", sources)
	}
}

func TestEveryTraceFileReads(t *testing.T) {
	var files []string
	for _, rel := range testenv.DataFiles(t, "trc10046/*/*.trc") {
		files = append(files, testenv.DataFile(t, rel))
	}
	if len(files) < 10 {
		t.Fatalf("found %d trace files", len(files))
	}
	dir := t.TempDir()
	for _, f := range files {
		name := filepath.Base(f)
		var rep jsonReport
		r := run(t, "", "report", "--format", "json", f)
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil {
			t.Errorf("%s: report exit %d: %s", name, r.code, r.stderr)
			continue
		}
		h := run(t, "", "heatmap", "--once", "--plain", f)
		if h.code != 0 || strings.Contains(h.stdout, "\x1b") {
			t.Errorf("%s: heatmap exit %d: %s", name, h.code, h.stderr)
		}
		html := filepath.Join(dir, name+".html")
		if x := run(t, "", "heatmap", f, "-o", html); x.code != 0 {
			t.Errorf("%s: -o html exit %d: %s", name, x.code, x.stderr)
			continue
		}
		page, _ := os.ReadFile(html)
		// Every series of the report is drawn, in a frame and in the page.
		for _, s := range rep.Series {
			if !strings.Contains(h.stdout, s.Event) || !strings.Contains(string(page), s.Event) {
				t.Errorf("%s: series %q missing from the heat map or the HTML", name, s.Event)
			}
		}
	}
}

func TestHeatmapOncePlain(t *testing.T) {
	f := testenv.DataFile(t, "pylatencymap/example_latency_data.txt")
	r := run(t, "", "heatmap", "--once", "--plain", f)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "\x1b") {
		t.Error("plain output contains escape codes")
	}
	for _, want := range []string{"db file sequential read latency data from gv$event_histogram", "6", "."} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("frame lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestHeatmapPipeWithoutTerminalPrintsPlainFrames(t *testing.T) {
	f := testenv.DataFile(t, "trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc")
	r := run(t, "", "heatmap", "--speed", "1000", f)
	if r.code != 0 || strings.Contains(r.stdout, "\x1b") || r.stdout == "" {
		t.Errorf("exit %d, escapes %v, %d bytes", r.code, strings.Contains(r.stdout, "\x1b"), len(r.stdout))
	}
}

func TestHeatmapImages(t *testing.T) {
	f := testenv.DataFile(t, realTrace)
	dir := t.TempDir()
	for _, ext := range []string{".html", ".svg", ".png"} {
		out := filepath.Join(dir, "waits"+ext)
		if r := run(t, "", "heatmap", f, "-o", out); r.code != 0 {
			t.Fatalf("%s: exit %d: %s", ext, r.code, r.stderr)
		}
		data, err := os.ReadFile(out)
		if err != nil || len(data) < 100 {
			t.Fatalf("%s: %d bytes, %v", ext, len(data), err)
		}
		if ext == ".html" {
			html := string(data)
			for _, ev := range []string{"db file sequential read", "PL/SQL lock timer", "SQL*Net message from client"} {
				if !strings.Contains(html, ev) {
					t.Errorf("HTML lacks series %q", ev)
				}
			}
			if strings.Contains(html, "src=\"http") || strings.Contains(html, "href=\"http") {
				t.Error("HTML references the network")
			}
		}
	}
	if r := run(t, "", "heatmap", f, "-o", filepath.Join(dir, "x.gif")); r.code == 0 {
		t.Error("unknown image extension accepted")
	}
}

func TestRecordReplayGivesTheSameReport(t *testing.T) {
	for _, rel := range []string{"pylatencymap/example_latency_data.txt", realTrace} {
		f := testenv.DataFile(t, rel)
		rec := filepath.Join(t.TempDir(), "x.lsr")
		if r := run(t, "", "record", f, "-o", rec); r.code != 0 {
			t.Fatalf("record: exit %d: %s", r.code, r.stderr)
		}
		orig := run(t, "", "report", "--format", "json", f)
		replay := run(t, "", "report", "--format", "json", rec)
		if orig.stdout != replay.stdout {
			t.Errorf("%s: replayed report differs from the original", rel)
		}
		st, _ := os.Stat(rec)
		src, _ := os.Stat(f)
		t.Logf("%s: %d bytes of source, %d bytes recorded", rel, src.Size(), st.Size())
	}
}

func TestStdinSource(t *testing.T) {
	data, err := os.ReadFile(testenv.DataFile(t, "pylatencymap/example_latency_data.txt"))
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, string(data), "report", "--format", "json", "-")
	var rep jsonReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Series) != 1 || rep.Series[0].Count != 1237243 {
		t.Errorf("stdin report: %v %+v\n%s", err, rep, r.stderr)
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"missing file", []string{"report", filepath.Join(dir, "nope.trc")}, 1, "nope.trc"},
		{"unknown format", []string{"report", write("x.txt", "hello world\nthis is not latency data\n")}, 1, "tried latscope, pylatencymap, oracle-10046"},
		{"no sources", []string{"report"}, 2, "SOURCE"},
		{"bad flag", []string{"report", "--nope", "x"}, 2, "--nope"},
		{"bad bound", []string{"report", "--bound", "middle", "x"}, 2, "bound"},
		{"record without -o", []string{"record", "x"}, 2, "-o FILE"},
	}
	for _, c := range cases {
		r := run(t, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.inStderr) {
			t.Errorf("%s: exit %d (want %d), stderr %q should name %q", c.name, r.code, c.code, r.stderr, c.inStderr)
		}
		if c.code == 1 && strings.Count(r.stderr, "latscope: ") != 1 {
			t.Errorf("%s: the error of a lone SOURCE printed more than once:\n%s", c.name, r.stderr)
		}
	}
	// Several SOURCEs: each failure once, then the summary.
	r := run(t, "", "report", filepath.Join(dir, "a.trc"), filepath.Join(dir, "b.trc"))
	if r.code != 1 || strings.Count(r.stderr, "a.trc") != 1 || strings.Count(r.stderr, "b.trc") != 1 || !strings.Contains(r.stderr, "none of the 2 sources") {
		t.Errorf("two missing SOURCEs: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	empty := write("empty.trc", "")
	if r := run(t, "", "report", empty); r.code != 0 || !strings.Contains(r.stdout, "no latency data") {
		t.Errorf("empty input: exit %d, %q", r.code, r.stdout)
	}
	// A forced format that reads nothing fails and names what it skipped.
	prose := write("prose.txt", "Tracing... Hit Ctrl-C to end.\n\nnot a table\n^C\n")
	if r := run(t, "", "report", "--input-format", "bcc", prose); r.code != 1 ||
		!strings.Contains(r.stderr, "nothing read as bcc: 3 line(s) could not be used") || !strings.Contains(r.stderr, "prose.txt:3: ") ||
		strings.Contains(r.stdout, "no latency data") {
		t.Errorf("forced bcc on prose: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	noWaits := write("nowaits.trc", "Trace file /x/y_ora_1.trc\nOracle Database 19c\n\n*** 2024-01-01T00:00:00.000000+00:00\n")
	if r := run(t, "", "report", noWaits); r.code != 0 {
		t.Errorf("trace without WAIT lines: exit %d %s", r.code, r.stderr)
	}
}

func TestMalformedLinesAreReportedAndSkipped(t *testing.T) {
	data, err := os.ReadFile(testenv.DataFile(t, "pylatencymap/example_latency_data.txt"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	lines[9] = "32, not-a-number" // line 10, inside the first record
	p := filepath.Join(t.TempDir(), "damaged.txt")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", "report", "--format", "json", p)
	if r.code != 0 || !strings.Contains(r.stderr, "damaged.txt:10:") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var rep jsonReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Series) != 1 || rep.Series[0].Count == 0 {
		t.Errorf("good records were lost: %v %+v", err, rep)
	}
	if len(rep.Sources) != 1 || rep.Sources[0].Malformed != 1 {
		t.Errorf("malformed count %+v", rep.Sources)
	}
}

func TestFormatsAndHelp(t *testing.T) {
	r := run(t, "", "formats")
	for _, want := range []string{"pylatencymap", "oracle-10046", "latscope", "iotest:ARG"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("formats lacks %q", want)
		}
	}
	for _, cmd := range []string{"heatmap", "report", "record"} {
		h := run(t, "", cmd, "--help")
		if h.code != 0 || !strings.Contains(h.stdout, "Examples:") {
			t.Errorf("%s --help: exit %d, no examples", cmd, h.code)
		}
	}
}

func TestIOTestProbeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	// 6 s: creating the 256 MiB scratch file alone took over 3 s at load 11.
	rep := reportJSON(t, "--duration", "6s", "iotest:"+dir)
	if len(rep.Series) != 1 || rep.Series[0].Count == 0 {
		t.Fatalf("iotest report %+v", rep)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 0 {
		t.Errorf("scratch files left behind: %v", left)
	}
	t.Logf("iotest: %v events in %v, p50 %v µs, p99 %v µs", rep.Series[0].Count, time.Since(start).Round(time.Millisecond),
		*rep.Series[0].P50Us, *rep.Series[0].P99Us)
}

func TestFollowReadsAGrowingFile(t *testing.T) {
	data, err := os.ReadFile(testenv.DataFile(t, "pylatencymap/example_latency_data.txt"))
	if err != nil {
		t.Fatal(err)
	}
	records := strings.SplitAfter(string(data), "<end record>")
	p := filepath.Join(t.TempDir(), "growing.txt")
	if err := os.WriteFile(p, []byte(records[0]+records[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer f.Close()
		for _, rec := range records[2:12] {
			time.Sleep(100 * time.Millisecond)
			f.WriteString(rec)
		}
	}()
	rep := reportJSON(t, "--follow", "--duration", "3s", p)
	if len(rep.Series) != 1 || len(rep.Series[0].Intervals) != 11 {
		t.Fatalf("followed %d intervals, want 11 (12 records)", len(rep.Series[0].Intervals))
	}
}

// TestInteractiveTerminal drives the full-screen view in a real terminal
// (tmux): keys switch series and maps, q quits with exit code 0. The first
// series is the trace's non-idle event with the most time waited
// (db file sequential read, 76 526 µs by an awk sum of its ela= values).
func TestInteractiveTerminal(t *testing.T) {
	f := testenv.DataFile(t, realTrace)
	statusFile := filepath.Join(t.TempDir(), "status")
	term := startTerminal(t, binary+" heatmap "+f+"; echo $? > "+statusFile)
	tm, waitFor := term.tmux, term.waitFor
	var err error
	first := waitFor("the first series", func(s string) bool { return strings.Contains(s, "db file sequential read") })
	if !strings.Contains(first, "requency") || !strings.Contains(first, "ntensity") {
		t.Errorf("both maps expected:\n%s", first)
	}
	tm("send-keys", "-t", "e2e", "n")
	waitFor("the next series", func(s string) bool { return !strings.Contains(s, "db file sequential read") })
	tm("send-keys", "-t", "e2e", "f")
	waitFor("frequency only", func(s string) bool { return !strings.Contains(s, "ntensity heat map") })
	tm("send-keys", "-t", "e2e", "q")
	var status []byte
	waitFor("exit", func(string) bool {
		status, err = os.ReadFile(statusFile)
		return err == nil && len(status) > 0
	})
	if st := strings.TrimSpace(string(status)); st != "0" {
		t.Errorf("exit status %s after q, want 0", st)
	}
}

func TestHeatmapMatrixJSONShowsTheCalibrationRates(t *testing.T) {
	for _, c := range []struct {
		file   string
		factor float64 // time waited per event, relative to the bucket value
	}{{"calibration_data.txt", 1.5}, {"calibration_data_oracle.txt", 0.75}} {
		r := run(t, "", "heatmap", "--format", "json", testenv.DataFile(t, "pylatencymap/"+c.file))
		if r.code != 0 {
			t.Fatalf("%s: exit %d %s", c.file, r.code, r.stderr)
		}
		var m struct {
			Series []struct {
				Rows []struct {
					LowerUs float64  `json:"lower_us"`
					UpperUs *float64 `json:"upper_us"`
				} `json:"rows"`
				Freq  [][]float64 `json:"events_per_s"`
				Inten [][]float64 `json:"seconds_waited_per_s"`
			} `json:"series"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &m); err != nil || len(m.Series) != 1 {
			t.Fatalf("%s: %v", c.file, err)
		}
		s := m.Series[0]
		checked := 0
		for col := range s.Freq {
			for j, row := range s.Rows {
				if s.Freq[col][j] == 0 {
					continue
				}
				// The bucket value N is the row's upper bound for Oracle
				// data ([N/2, N)) and its lower bound for SystemTap ([N, 2N)).
				n := row.LowerUs
				if c.factor == 0.75 {
					n = *row.UpperUs
				}
				if s.Freq[col][j] != 1 || math.Abs(s.Inten[col][j]-c.factor*n*1e-6) > 1e-12 {
					t.Errorf("%s: column %d row %g: %g ev/s, %g s/s; want 1 and %g", c.file, col, row.LowerUs, s.Freq[col][j], s.Inten[col][j], c.factor*n*1e-6)
				}
				checked++
			}
		}
		if checked != 20 {
			t.Errorf("%s: %d cells with events, want 20 (10 buckets × 2 s)", c.file, checked)
		}
	}
}

func TestConvertToARecordingAndBack(t *testing.T) {
	f := testenv.DataFile(t, realTrace)
	out := filepath.Join(t.TempDir(), "waits.lsr")
	if r := run(t, "", "convert", f, "-o", out); r.code != 0 || !strings.Contains(r.stderr, "(latscope)") {
		t.Fatalf("convert by extension: exit %d %s", r.code, r.stderr)
	}
	orig := run(t, "", "report", "--format", "json", f)
	back := run(t, "", "report", "--format", "json", out)
	if orig.stdout != back.stdout {
		t.Error("report of the converted recording differs from the original")
	}
	if r := run(t, "", "convert", f, "-o", filepath.Join(t.TempDir(), "x.unknown")); r.code != 2 && r.code != 1 || !strings.Contains(r.stderr, "--to") {
		t.Errorf("unknown extension: exit %d %q", r.code, r.stderr)
	}
	if r := run(t, "", "convert", f); r.code != 2 {
		t.Errorf("convert without --to or -o: exit %d", r.code)
	}
}

func TestPyLatencyMapRecordsOfRawDTraceAndSystemTap(t *testing.T) {
	// The records hold raw DTrace quantize() and SystemTap @hist_log tables
	// (PyLatencyMap needed a connector for them); counts are cumulative, so
	// the total is the last record's rows minus the first's, summed here
	// from the raw text.
	row := regexp.MustCompile(`^\s*(\d+)\s+\|[@ ]*\s+(\d+)\s*$`)
	for _, c := range []struct{ file, unit string }{{"test_DTrace_data.txt", "ns"}, {"test_SystemTap_data.txt", "us"}} {
		path := testenv.DataFile(t, "pylatencymap/"+c.file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var sums []float64
		for _, rec := range strings.Split(string(data), "<begin record>")[1:] {
			sum := 0.0
			for _, line := range strings.Split(rec, "\n") {
				if m := row.FindStringSubmatch(line); m != nil {
					n, _ := strconv.ParseFloat(m[2], 64)
					sum += n
				}
			}
			sums = append(sums, sum)
		}
		want := sums[len(sums)-1] - sums[0]
		rep := reportJSON(t, path)
		if len(rep.Series) != 1 || rep.Series[0].Count != want || rep.Series[0].SourceUnit != c.unit || want <= 0 {
			t.Errorf("%s: got %+v, want %v events in %s", c.file, rep.Series, want, c.unit)
		}
	}
}

// formatSamples are real samples of every input format (the package
// testdata files are real tool output copied with provenance, except the
// AWR exports, which are synthetic: no Oracle server here).
var formatSamples = []struct{ format, path string }{
	{"pylatencymap", "shared:pylatencymap/example_latency_data.txt"},
	{"oracle-10046", "shared:trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc"},
	{"bcc", "source/tracehist/testdata/bcc_ext4dist_example.txt"},
	{"bcc", "source/tracehist/testdata/bcc_wait_hist_recorded.txt"},
	{"bpftrace", "source/tracehist/testdata/bpftrace_runqlat_example.txt"},
	{"iolatency", "source/tracehist/testdata/perftools_iolatency_example.txt"},
	{"awr", "source/awr/testdata/awr_19c_rac.csv"},
	{"oracle-event-histogram", "source/awr/testdata/gv_micro_poll.csv"},
	{"fio-json", "source/fio/testdata/randread.json"},
	{"fio-histlog", "source/fio/testdata/randread_clat_hist.1.log"},
	{"hdrlog", "source/hdrlog/testdata/tagged-Log.logV2.hlog"},
	{"events", "source/events/testdata/iosnoop_example.txt"},
	{"postgres-log", "source/postgres/testdata/pg15-stderr.log"},
	{"postgres-log", "source/postgres/testdata/pg15.csv"},
	{"postgres-log", "source/postgres/testdata/pg15.json"},
}

func samplePath(t *testing.T, p string) string {
	if rel, ok := strings.CutPrefix(p, "shared:"); ok {
		return testenv.DataFile(t, rel)
	}
	return filepath.Join(testenv.RepoRoot(t), p)
}

// TestEveryFormatIsDetected reads each sample with detection and with the
// format forced: the reports are identical, so detection chose that format.
func TestEveryFormatIsDetected(t *testing.T) {
	for _, s := range formatSamples {
		p := samplePath(t, s.path)
		auto := run(t, "", "report", "--format", "json", p)
		forced := run(t, "", "report", "--format", "json", "--input-format", s.format, p)
		if auto.code != 0 || forced.code != 0 {
			t.Errorf("%s: exit %d / %d: %s %s", s.format, auto.code, forced.code, auto.stderr, forced.stderr)
			continue
		}
		var rep jsonReport
		if err := json.Unmarshal([]byte(auto.stdout), &rep); err != nil || len(rep.Series) == 0 {
			t.Errorf("%s: no series read from %s", s.format, s.path)
		}
		if auto.stdout != forced.stdout {
			t.Errorf("%s: detection did not pick %s for %s", s.format, s.format, s.path)
		}
	}
}

// TestConvertRoundTrips converts every sample to each target latscope also
// reads and back. hdrlog and latscope recordings keep every bucket exactly;
// Prometheus keeps the counts and sums but writes the buckets as le edges,
// which come back as custom edges (listed natively by report).
func TestConvertRoundTrips(t *testing.T) {
	dir := t.TempDir()
	for _, s := range formatSamples {
		p := samplePath(t, s.path)
		orig := reportJSON(t, p)
		for _, to := range []string{"hdrlog", "latscope", "prometheus"} {
			out := filepath.Join(dir, s.format+"."+to)
			if r := run(t, "", "convert", p, "--to", to, "-o", out); r.code != 0 {
				t.Errorf("%s → %s: exit %d %s", s.format, to, r.code, r.stderr)
				continue
			}
			back := reportJSON(t, out)
			if len(back.Series) != len(orig.Series) {
				t.Errorf("%s → %s: %d series back, want %d", s.format, to, len(back.Series), len(orig.Series))
				continue
			}
			for i := range orig.Series {
				a, b := orig.Series[i], back.Series[i]
				if a.Event != b.Event || math.Abs(a.Count-b.Count) > 1e-6*a.Count || math.Abs(a.SumUs-b.SumUs) > 1e-6*a.SumUs {
					t.Errorf("%s → %s: series %q %v events %v µs, back %q %v %v", s.format, to, a.Event, a.Count, a.SumUs, b.Event, b.Count, b.SumUs)
					continue
				}
				if to == "prometheus" {
					continue
				}
				if len(a.Buckets) != len(b.Buckets) {
					t.Errorf("%s → %s: %s: %d buckets, back %d", s.format, to, a.Event, len(a.Buckets), len(b.Buckets))
					continue
				}
				for j := range a.Buckets {
					if a.Buckets[j] != b.Buckets[j] {
						t.Errorf("%s → %s: %s bucket %d %+v, back %+v", s.format, to, a.Event, j, a.Buckets[j], b.Buckets[j])
						break
					}
				}
			}
		}
	}
}

// stuckLatscope describes a latscope that did not get on in a terminal
// test: whether it still runs and, if it does, the stacks of its
// goroutines (SIGQUIT prints them on the terminal).
func stuckLatscope(tm func(args ...string) string) string {
	ps, _ := exec.Command("pgrep", "-a", "-f", "^"+regexp.QuoteMeta(binary)+" ").CombinedOutput()
	if len(ps) == 0 {
		return "latscope is no longer running"
	}
	_ = exec.Command("pkill", "-QUIT", "-f", "^"+regexp.QuoteMeta(binary)+" ").Run()
	time.Sleep(time.Second)
	return "latscope still runs:\n" + string(ps) + "its goroutines:\n" + tm("capture-pane", "-p", "-S", "-2000", "-t", "e2e")
}

// tmuxTerminal is a real terminal (a tmux session) running one command line.
type tmuxTerminal struct {
	tmux    func(args ...string) string
	waitFor func(what string, ok func(screen string) bool) string
}

// startTerminal runs cmdline in a 150×50 tmux session whose shell stays
// after the command exits; the session is killed at the end of the test.
// The command line should record its exit status itself. The shell sleeps
// on instead of exiting because tmux, on a loaded machine, can mark a pane
// dead before it has drawn the last output the program wrote (seen: a
// report cut mid-line, exit status 0).
func startTerminal(t *testing.T, cmdline string) tmuxTerminal {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		testenv.SkipOrFail(t, "tmux not installed")
	}
	sock := "latscope-e2e-" + strings.ReplaceAll(t.Name(), "/", "-")
	tm := func(args ...string) string {
		out, err := exec.Command(tmux, append([]string{"-L", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tm("-f", "/dev/null", "new-session", "-d", "-s", "e2e", "-x", "150", "-y", "50", "-e", "TERM=xterm-256color", cmdline+"; sleep 600")
	t.Cleanup(func() { _ = exec.Command(tmux, "-L", sock, "kill-server").Run() })
	tm("set-option", "-t", "e2e", "remain-on-exit", "on")
	waitFor := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			s := tm("capture-pane", "-p", "-t", "e2e")
			if ok(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("waiting for %s; screen:\n%s\n%s", what, s, stuckLatscope(tm))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return tmuxTerminal{tmux: tm, waitFor: waitFor}
}

// TestHeatmapMatrixOfYearsApartStaysBounded: two real traces four years
// apart (2019 and 2023) on 1 s columns would need 126 million columns per
// series; the matrix widens them to at most heatmap.MaxMatrixColumns (100 000)
// and says so, instead of exhausting memory (it was OOM-killed at 24 GB).
func TestHeatmapMatrixOfYearsApartStaysBounded(t *testing.T) {
	a := testenv.DataFile(t, "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc")
	b := testenv.DataFile(t, "trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc")
	r := run(t, "", "heatmap", a, b, "--interval", "1s", "--event", "db file sequential read", "--format", "json")
	if r.code != 0 || !strings.Contains(r.stderr, "the matrix has columns of") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var m struct {
		Series []struct {
			ColumnSeconds float64           `json:"column_seconds"`
			Columns       []json.RawMessage `json:"columns"`
		} `json:"series"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil || len(m.Series) != 1 {
		t.Fatalf("%v, %d series", err, len(m.Series))
	}
	s := m.Series[0]
	if n := len(s.Columns); n > 100_000 || n < 50_000 || s.ColumnSeconds <= 1 || s.ColumnSeconds != math.Trunc(s.ColumnSeconds) {
		t.Errorf("%d columns of %g s, want at most 100 000 whole multiples of 1 s", n, s.ColumnSeconds)
	}
}
