package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const awrSysEventFixture = "../../source/awr/testdata/systemevent/awr_system_event_synthetic.csv"

// awrRawTotals computes, straight from the SYNTHETIC extract's lines, what
// every event of every instance waited over the file: the sum over
// consecutive snapshots of the counters' differences, or of the counters
// themselves after a new STARTUP_TIME (they restart from zero), Idle left
// out. Keys are "instance|event".
func awrRawTotals(t *testing.T) (waits, micro map[string]float64, class map[string]string) {
	t.Helper()
	f, err := os.Open(awrSysEventFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// columns: DBID,SNAP_ID,INSTANCE_NUMBER,STARTUP_TIME,BEGIN,END,WAIT_CLASS,EVENT_NAME,TOTAL_WAITS,TIME_WAITED_MICRO
	waits, micro, class = map[string]float64{}, map[string]float64{}, map[string]string{}
	type last struct {
		startup     string
		waits, time float64
	}
	prev := map[string]last{}
	firstEnd := map[string]string{} // instance → its first snapshot, which opens no window
	for _, r := range recs[1:] {
		inst, startup, end, cls, ev := r[2], r[3], r[5], r[6], r[7]
		w, _ := strconv.ParseFloat(r[8], 64)
		us, _ := strconv.ParseFloat(r[9], 64)
		if _, ok := firstEnd[inst]; !ok {
			firstEnd[inst] = end
		}
		k := inst + "|" + ev
		p, seen := prev[k]
		prev[k] = last{startup, w, us}
		if end == firstEnd[inst] || cls == "Idle" {
			continue
		}
		if seen && p.startup == startup {
			w, us = w-p.waits, us-p.time
		}
		waits[k] += w
		micro[k] += us
		class[k] = cls
	}
	return waits, micro, class
}

func TestAWRFiguresEqualTheRawExtract(t *testing.T) {
	waits, micro, class := awrRawTotals(t)
	res := run(t, "", "awr", awrSysEventFixture, "--format", "csv", "--tz", "UTC")
	if res.code != 0 || res.stderr != "" {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(res.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(recs[0], ",") != "snapshot_time,instance,wait_class,event,waits,time_s,mean_ms" {
		t.Fatalf("heading %q", recs[0])
	}
	gotWaits, gotS := map[string]float64{}, map[string]float64{}
	for _, r := range recs[1:] {
		k := r[1] + "|" + r[3]
		if class[k] != r[2] {
			t.Errorf("%s: wait class %q, extract says %q", k, r[2], class[k])
		}
		w, _ := strconv.ParseFloat(r[4], 64)
		s, _ := strconv.ParseFloat(r[5], 64)
		mean, _ := strconv.ParseFloat(r[6], 64)
		if w > 0 && math.Abs(mean-s*1000/w) > 1e-5 {
			t.Errorf("row %q: mean_ms is not time_s/waits", r)
		}
		gotWaits[k] += w
		gotS[k] += s
	}
	if len(gotWaits) != len(waits) || len(waits) != 10 {
		t.Errorf("%d instance-events, the extract has %d (want 5 events × 2 instances)", len(gotWaits), len(waits))
	}
	for k, w := range waits {
		// time_s is printed to the µs: exact, as TIME_WAITED_MICRO is whole.
		if gotWaits[k] != w || math.Abs(gotS[k]-micro[k]/1e6) > 1e-6 {
			t.Errorf("%s: %v waits, %v s; the extract says %v waits, %v s", k, gotWaits[k], gotS[k], w, micro[k]/1e6)
		}
	}

	// JSON: the rankings and the pivot add up to the same totals.
	res = run(t, "", "awr", awrSysEventFixture, "--format", "json", "--top", "10", "--tz", "UTC")
	if res.code != 0 {
		t.Fatalf("json: exit %d: %s", res.code, res.stderr)
	}
	var a struct {
		TimeS  float64 `json:"time_s"`
		Events []struct {
			Name  string  `json:"name"`
			Waits float64 `json:"waits"`
			TimeS float64 `json:"time_s"`
		} `json:"top_events"`
		Classes []struct {
			Name  string  `json:"name"`
			TimeS float64 `json:"time_s"`
		} `json:"wait_classes"`
		Pivot struct {
			TimeS [7][24]float64 `json:"time_s"`
		} `json:"pivot"`
		Snapshots []json.RawMessage `json:"snapshots"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &a); err != nil {
		t.Fatal(err)
	}
	var all float64
	byEvent, byClass := map[string]float64{}, map[string]float64{}
	for k, us := range micro {
		all += us / 1e6
		byEvent[k[strings.IndexByte(k, '|')+1:]] += us / 1e6
		byClass[class[k]] += us / 1e6
	}
	if math.Abs(a.TimeS-all) > 1e-6 || len(a.Events) != 5 || len(a.Classes) != 5 || len(a.Snapshots) != 2*168 {
		t.Errorf("total %v (extract %v), %d events, %d classes, %d snapshot windows", a.TimeS, all, len(a.Events), len(a.Classes), len(a.Snapshots))
	}
	for _, e := range a.Events {
		if math.Abs(e.TimeS-byEvent[e.Name]) > 1e-6 {
			t.Errorf("event %s: %v s, extract %v", e.Name, e.TimeS, byEvent[e.Name])
		}
	}
	for _, c := range a.Classes {
		if math.Abs(c.TimeS-byClass[c.Name]) > 1e-6 {
			t.Errorf("class %s: %v s, extract %v", c.Name, c.TimeS, byClass[c.Name])
		}
	}
	var pivot float64
	for _, d := range a.Pivot.TimeS {
		for _, v := range d {
			pivot += v
		}
	}
	if math.Abs(pivot-all) > 1e-6 {
		t.Errorf("pivot sums to %v, extract %v", pivot, all)
	}
}

// The hour-of-day × day pivot puts each window at its snapshot time's hour
// and weekday; the fixture's first window ends Monday 2024-03-11 01:00:01.
func TestAWRPivotCellEqualsTheRawExtract(t *testing.T) {
	res := run(t, "", "awr", awrSysEventFixture, "--format", "csv", "--tz", "UTC")
	recs, err := csv.NewReader(strings.NewReader(res.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var wedAt10 float64
	for _, r := range recs[1:] {
		at, err := time.Parse(time.DateTime, r[0])
		if err != nil {
			t.Fatal(err)
		}
		if at.Weekday() == time.Wednesday && at.Hour() == 10 {
			s, _ := strconv.ParseFloat(r[5], 64)
			wedAt10 += s
		}
	}
	res = run(t, "", "awr", awrSysEventFixture, "--format", "json", "--tz", "UTC")
	var a struct {
		Pivot struct {
			TimeS [7][24]float64 `json:"time_s"`
		} `json:"pivot"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &a); err != nil {
		t.Fatal(err)
	}
	if math.Abs(a.Pivot.TimeS[2][10]-wedAt10) > 1e-6 || wedAt10 == 0 {
		t.Errorf("pivot Wed 10 h %v, the long CSV's rows %v", a.Pivot.TimeS[2][10], wedAt10)
	}
}

// A DBA_HIST_EVENT_HISTOGRAM export goes through the histogram source: its
// waits per event equal the report's counts.
func TestAWRHistogramExportEqualsTheReport(t *testing.T) {
	fixture := "../../source/awr/testdata/awr_19c_rac.csv"
	rep := reportJSON(t, "report", fixture, "--tz", "UTC")
	want := map[string]float64{}
	for _, s := range rep.Series {
		want[s.Instance+"|"+s.Event] += s.Count
	}
	res := run(t, "", "awr", fixture, "--format", "csv", "--tz", "UTC")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(res.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range recs[1:] {
		w, _ := strconv.ParseFloat(r[4], 64)
		got[r[1]+"|"+r[3]] += w
	}
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("series %v, report %v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %v waits, report counts %v", k, got[k], w)
		}
	}
}

func TestAWROutputsAndUsage(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "awr.html")
	if res := run(t, "", "awr", awrSysEventFixture, "-o", page); res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", "Content-Security-Policy", "Time waited (s) by day and hour", "<polyline"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if res := run(t, "", "awr", awrSysEventFixture, "--format", "xml"); res.code == 0 || !strings.Contains(res.stderr, "--format") {
		t.Errorf("--format xml: exit %d, %s", res.code, res.stderr)
	}
	if res := run(t, "", "awr", "--help"); res.code != 0 || !strings.Contains(res.stdout, "latscope awr awr_system_event.csv -o awr.html") {
		t.Errorf("--help: exit %d\n%s", res.code, res.stdout)
	}
	if res := run(t, "", "awr", filepath.Join(dir, "missing.csv")); res.code == 0 {
		t.Error("a missing file is not an error")
	}
}

// TestAWRDocsExampleIsTheOutput keeps docs/awr.md's console examples true:
// each `$ latscope awr ...` line's output, as printed there, is what the
// binary prints (run from the repository root, where the docs' paths lead).
func TestAWRDocsExampleIsTheOutput(t *testing.T) {
	doc, err := os.ReadFile("../../docs/awr.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	lines := strings.Split(string(doc), "\n")
	for i, l := range lines {
		cmdline, ok := strings.CutPrefix(l, "$ latscope awr ")
		if !ok || strings.Contains(cmdline, "|") || strings.Contains(cmdline, " -o ") {
			continue
		}
		var want []string
		for _, o := range lines[i+1:] {
			if strings.HasPrefix(o, "$ ") || o == "```" {
				break
			}
			want = append(want, o)
		}
		args := append([]string{"awr"}, strings.Fields(strings.ReplaceAll(cmdline, "source/", "../../source/"))...)
		res := run(t, "", args...)
		if res.code != 0 || res.stdout != strings.Join(want, "\n")+"\n" {
			t.Errorf("docs/awr.md:%d: latscope awr %s prints\n%s\nthe docs show\n%s", i+1, cmdline, res.stdout, strings.Join(want, "\n"))
		}
		checked++
	}
	if checked == 0 {
		t.Error("no example checked")
	}
}
