package awr

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
)

const sysEventFixture = "systemevent/awr_system_event_synthetic.csv"

func readSysEventFixture(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", sysEventFixture))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// independentDeltas differences the SYNTHETIC extract with encoding/csv
// and plain loops, as a DBA would in a spreadsheet: per instance, rows in
// file order (the script orders by instance, snap_id), a window per pair of
// consecutive snapshot times; after a new STARTUP_TIME the counters are the
// window's, from the startup on.
func independentDeltas(t *testing.T, data []byte) []EventDelta {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, n := range recs[0] {
		col[n] = i
	}
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04:05.000", s, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	type counters struct{ waits, micro float64 }
	var out []EventDelta
	prevCum := map[string]map[string]counters{} // instance → event → at the previous snapshot
	prevEnd := map[string]string{}
	prevStartup := map[string]string{}
	cur := map[string]map[string]counters{}
	curEnd := map[string]string{}
	flush := func(inst string) {
		if _, seen := prevEnd[inst]; seen {
			restarted := prevStartup[inst] != recsStartup(recs, col, inst, curEnd[inst])
			begin := at(prevEnd[inst])
			if restarted {
				begin = at(recsStartup(recs, col, inst, curEnd[inst]))
			}
			for ev, c := range cur[inst] {
				p := prevCum[inst][ev]
				if restarted {
					p = counters{}
				}
				out = append(out, EventDelta{Instance: inst, Begin: begin, End: at(curEnd[inst]), WaitClass: eventClass(recs, col, ev),
					Event: ev, Waits: c.waits - p.waits, TimeWaitedMicro: c.micro - p.micro})
			}
		}
		prevCum[inst], prevEnd[inst] = cur[inst], curEnd[inst]
		prevStartup[inst] = recsStartup(recs, col, inst, curEnd[inst])
		cur[inst] = nil
	}
	for _, r := range recs[1:] {
		inst, end := r[col["INSTANCE_NUMBER"]], r[col["END_INTERVAL_TIME"]]
		if cur[inst] != nil && curEnd[inst] != end {
			flush(inst)
		}
		if cur[inst] == nil {
			cur[inst] = map[string]counters{}
			curEnd[inst] = end
		}
		cur[inst][r[col["EVENT_NAME"]]] = counters{num(r[col["TOTAL_WAITS"]]), num(r[col["TIME_WAITED_MICRO"]])}
	}
	for inst := range cur {
		flush(inst)
	}
	sortDeltas(out)
	return out
}

func recsStartup(recs [][]string, col map[string]int, inst, end string) string {
	for _, r := range recs[1:] {
		if r[col["INSTANCE_NUMBER"]] == inst && r[col["END_INTERVAL_TIME"]] == end {
			return r[col["STARTUP_TIME"]]
		}
	}
	return ""
}

func eventClass(recs [][]string, col map[string]int, ev string) string {
	for _, r := range recs[1:] {
		if r[col["EVENT_NAME"]] == ev {
			return r[col["WAIT_CLASS"]]
		}
	}
	return ""
}

func sortDeltas(ds []EventDelta) {
	slices.SortFunc(ds, func(a, b EventDelta) int {
		if c := a.End.Compare(b.End); c != 0 {
			return c
		}
		if c := strings.Compare(a.Instance, b.Instance); c != 0 {
			return c
		}
		return strings.Compare(a.Event, b.Event)
	})
}

func TestSystemEventDeltasEqualAnIndependentDifference(t *testing.T) {
	data := readSysEventFixture(t)
	diag := input.NewDiagnostics(nil, 0)
	rows, err := ReadSystemEvents(bytes.NewReader(data), sysEventFixture, time.UTC, diag)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2021 || diag.Count(sysEventFixture) != 0 {
		t.Fatalf("%d rows, %d malformed; want the fixture's 2021 data lines, none malformed", len(rows), diag.Count(sysEventFixture))
	}
	got := SystemEventDeltas(rows, sysEventFixture, diag)
	want := independentDeltas(t, data)
	if len(got) != len(want) {
		t.Fatalf("%d deltas, independent count %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("delta %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	// The fixture's story, checked on its own: 168 windows per instance, the
	// restart's window starting at the startup, the enqueue's first window
	// holding its whole count.
	windows := map[string]map[time.Time]bool{}
	for _, d := range got {
		if windows[d.Instance] == nil {
			windows[d.Instance] = map[time.Time]bool{}
		}
		windows[d.Instance][d.End] = true
		if d.Waits < 0 || d.TimeWaitedMicro < 0 {
			t.Errorf("negative delta %+v", d)
		}
	}
	if len(windows["1"]) != 168 || len(windows["2"]) != 168 {
		t.Errorf("windows per instance: %d, %d; want 168 each", len(windows["1"]), len(windows["2"]))
	}
	restart := time.Date(2024, 3, 14, 14, 0, 2, 0, time.UTC)
	for _, d := range got {
		if d.Instance == "2" && d.End.Equal(restart) && !d.Begin.Equal(time.Date(2024, 3, 14, 13, 20, 2, 0, time.UTC)) {
			t.Errorf("restart window begins %v, want the STARTUP_TIME 13:20:02", d.Begin)
		}
	}
	for _, r := range rows {
		if r.Instance == "1" && r.Event == "enq: TX - row lock contention" && r.End.Equal(time.Date(2024, 3, 11, 3, 0, 1, 0, time.UTC)) {
			for _, d := range got {
				if d.Instance == "1" && d.Event == r.Event && d.End.Equal(r.End) && (d.Waits != r.TotalWaits || d.TimeWaitedMicro != r.TimeWaitedMicro) {
					t.Errorf("first enqueue window %+v, want its whole count %v, %v", d, r.TotalWaits, r.TimeWaitedMicro)
				}
			}
		}
	}
}

func TestSystemEventSpoolAndMalformedLines(t *testing.T) {
	spool := strings.Join([]string{
		"",
		"SQL> @sql/awr_system_event.sql 1 3",
		"INSTANCE_NUMBER STARTUP_TIME        END_INTERVAL_TIME   WAIT_CLASS EVENT_NAME              TOTAL_WAITS TIME_WAITED_MICRO",
		"--------------- ------------------- ------------------- ---------- ----------------------- ----------- -----------------",
		"              1 2024-01-01 00:00:00 2024-01-02 10:00:00 Commit     log file sync                   100            200000",
		"              1 2024-01-01 00:00:00 2024-01-02 11:00:00 Commit     log file sync                   150            300000",
		"              1 2024-01-01 00:00:00 2024-01-02 11:00:00 Commit     log file sync                   999            999999",
		"              1 2024-01-01 00:00:00 2024-01-02 12:00:00 Commit     log file sync                   1x0            300000",
		"              1 2024-01-01 00:00:00 2024-01-02 12:00:00 Commit     log file sync                   -10            300000",
		"              1 2024-01-01 00:00:00 yesterday           Commit     log file sync                   160            300000",
		"              1 2024-01-01 00:00:00 2024-01-02 13:00:00 Commit     log file sync                   190            390000",
		"",
		"7 rows selected.",
	}, "\n")
	var msgs bytes.Buffer
	diag := input.NewDiagnostics(&msgs, 10)
	rows, err := ReadSystemEvents(strings.NewReader(spool), "x.lst", time.UTC, diag)
	if err != nil {
		t.Fatal(err)
	}
	got := SystemEventDeltas(rows, "x.lst", diag)
	want := []EventDelta{
		{Instance: "1", Begin: time.Date(2024, 1, 2, 10, 0, 0, 0, time.UTC), End: time.Date(2024, 1, 2, 11, 0, 0, 0, time.UTC),
			WaitClass: "Commit", Event: "log file sync", Waits: 50, TimeWaitedMicro: 100000},
		{Instance: "1", Begin: time.Date(2024, 1, 2, 11, 0, 0, 0, time.UTC), End: time.Date(2024, 1, 2, 13, 0, 0, 0, time.UTC),
			WaitClass: "Commit", Event: "log file sync", Waits: 40, TimeWaitedMicro: 90000},
	}
	if !slices.Equal(got, want) {
		t.Errorf("deltas\n%+v\nwant\n%+v", got, want)
	}
	for _, line := range []string{"x.lst:7", "x.lst:8", "x.lst:9", "x.lst:10"} {
		if !strings.Contains(msgs.String(), line) {
			t.Errorf("no message for %s in\n%s", line, msgs.String())
		}
	}
	if n := diag.Count("x.lst"); n != 4 {
		t.Errorf("%d malformed lines, want 4 (the duplicate, 1x0, -10, yesterday)", n)
	}
}

func TestSystemEventRestartOutsideTheWindowIsSkipped(t *testing.T) {
	in := "INSTANCE_NUMBER,STARTUP_TIME,END_INTERVAL_TIME,EVENT_NAME,TOTAL_WAITS,TIME_WAITED_MICRO\n" +
		"1,2024-01-01 00:00:00,2024-01-02 10:00:00,e,100,1000\n" +
		"1,2024-01-01 00:00:00,2024-01-02 11:00:00,e,90,2000\n" + // went down: skipped
		"1,2024-01-01 00:00:00,2024-01-02 12:00:00,e,95,2500\n" +
		"1,2024-01-02 11:30:00,2024-01-02 11:45:00,e,5,50\n" // a startup before the previous end: out of order, skipped
	diag := input.NewDiagnostics(nil, 0)
	rows, err := ReadSystemEvents(strings.NewReader(in), "r.csv", time.UTC, diag)
	if err != nil {
		t.Fatal(err)
	}
	got := SystemEventDeltas(rows, "r.csv", diag)
	for _, d := range got {
		if d.Waits < 0 || d.TimeWaitedMicro < 0 {
			t.Errorf("negative delta %+v", d)
		}
	}
	if len(diag.Warnings()) == 0 {
		t.Error("no warning about the counter going down or the restart")
	}
}

func TestSystemEventNoRowsIsAnError(t *testing.T) {
	for _, in := range []string{"", "hello\n", "END_INTERVAL_TIME,EVENT_NAME,TOTAL_WAITS,TIME_WAITED_MICRO\n"} {
		_, err := ReadSystemEvents(strings.NewReader(in), "e.csv", time.UTC, input.NewDiagnostics(nil, 0))
		if err == nil || !strings.Contains(err.Error(), "e.csv") {
			t.Errorf("%q: error %v, want one naming e.csv", in, err)
		}
	}
}

func TestSystemEventSQLHeadingsMatchFixtureAndReader(t *testing.T) {
	got := selectHeadings(t, readSQL(t, "awr_system_event.sql"))
	if want := fixtureHeadings(t, sysEventFixture); !slices.Equal(got, want) {
		t.Errorf("awr_system_event.sql prints %q, fixture has %q", got, want)
	}
	h, ok := newSysEventHeader(got, layout{sep: ','})
	if !ok {
		t.Fatalf("headings %q not read", got)
	}
	for f, c := range h.col {
		if c < 0 {
			t.Errorf("field %d (%v) not found in %q", f, sysEventColumns[f], got)
		}
	}
	if !IsSystemEventHeading([]byte(strings.Join(got, ",") + "\n")) {
		t.Error("the script's heading is not detected")
	}
	sql := readSQL(t, "awr_system_event.sql")
	for _, want := range []string{"set markup csv on", "pagesize 50000", "feedback off", "whenever sqlerror exit", "latscope awr", "\nexit\n"} {
		if !strings.Contains(sql, want) {
			t.Errorf("awr_system_event.sql lacks %q", want)
		}
	}
}

// FuzzSystemEvents: no panic, every row's counters non-negative, no
// negative delta, and every malformed line named within the input.
func FuzzSystemEvents(f *testing.F) {
	data, err := os.ReadFile(filepath.Join("testdata", sysEventFixture))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[:min(len(data), 4000)])
	f.Add([]byte("INSTANCE_NUMBER;END_INTERVAL_TIME;EVENT_NAME;TOTAL_WAITS;TIME_WAITED_MICRO\n1;15.03.24 10:00:01;e;1,5;2\n1;15.03.24 11:00:01;e;3;4\n"))
	f.Add([]byte("END_INTERVAL_TIME EVENT_NAME TOTAL_WAITS TIME_WAITED_MICRO\n------------------- ---- --- ---\n2024-01-01 00:00:00 e 1 2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		IsSystemEventHeading(data)
		diag := input.NewDiagnostics(nil, 0)
		rows, err := ReadSystemEvents(bytes.NewReader(data), "f", time.UTC, diag)
		if err != nil {
			return
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		for _, r := range rows {
			if r.TotalWaits < 0 || r.TimeWaitedMicro < 0 || r.Line < 1 || r.Line > lines {
				t.Fatalf("row %+v", r)
			}
		}
		for _, d := range SystemEventDeltas(rows, "f", diag) {
			if d.Waits < 0 || d.TimeWaitedMicro < 0 || d.End.Before(d.Begin) {
				t.Fatalf("delta %+v", d)
			}
		}
		for _, p := range diag.Problems() {
			for _, pr := range p.First {
				if pr.Line < 1 || pr.Line > lines {
					t.Fatalf("problem %v outside the input", fmt.Sprint(pr))
				}
			}
		}
	})
}
