package awrstats

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/htmlpage"
)

// Two instances, three snapshot windows, an idle event: small enough that
// every figure below was worked out by hand.
func sampleRows() []Row {
	mon9 := time.Date(2024, 3, 11, 9, 0, 0, 0, time.UTC) // a Monday
	tue9 := mon9.Add(24 * time.Hour)
	mon10 := mon9.Add(time.Hour)
	r := func(at time.Time, inst, class, ev string, waits, s float64) Row {
		return Row{SnapshotTime: at, Begin: at.Add(-time.Hour), Instance: inst, WaitClass: class, Event: ev, Waits: waits, TimeS: s}
	}
	return []Row{
		r(tue9, "1", "User I/O", "db file sequential read", 1000, 5),
		r(mon9, "1", "User I/O", "db file sequential read", 2000, 4),
		r(mon9, "1", "Commit", "log file sync", 500, 1),
		r(mon9, "2", "Commit", "log file sync", 100, 2),
		r(mon9, "2", "Idle", "SQL*Net message from client", 10, 900),
		r(mon10, "1", "Commit", "log file sync", 300, 0.6),
		r(mon10, "1", "User I/O", "direct path read", 0, 0),
	}
}

func TestBuildFigures(t *testing.T) {
	a := Build(sampleRows(), Options{Top: 2})
	if a.TimeS != 12.6 || len(a.Rows) != 6 || !a.IdleLeftOut {
		t.Fatalf("total %v over %d rows (idle left out %v), want 12.6 s over 6", a.TimeS, len(a.Rows), a.IdleLeftOut)
	}
	wantEvents := []Total{
		{Name: "db file sequential read", WaitClass: "User I/O", Waits: 3000, TimeS: 9, MeanMs: 3, Share: 9 / 12.6},
		{Name: "log file sync", WaitClass: "Commit", Waits: 900, TimeS: 3.6, MeanMs: 4, Share: 3.6 / 12.6},
	}
	if len(a.Events) != 2 {
		t.Fatalf("top events %+v", a.Events)
	}
	for i, w := range wantEvents {
		if g := a.Events[i]; g.Name != w.Name || g.WaitClass != w.WaitClass || g.Waits != w.Waits || !near(g.TimeS, w.TimeS) ||
			!near(g.MeanMs, w.MeanMs) || !near(g.Share, w.Share) {
			t.Errorf("event %d: %+v, want %+v", i, g, w)
		}
	}
	if len(a.WaitClass) != 2 || a.WaitClass[0].Name != "User I/O" || a.WaitClass[1].Name != "Commit" || !near(a.WaitClass[1].TimeS, 3.6) {
		t.Errorf("wait classes %+v", a.WaitClass)
	}
	if len(a.Instances) != 2 || a.Instances[0].Instance != "1" || !near(a.Instances[0].TimeS, 10.6) || a.Instances[1].TimeS != 2 {
		t.Errorf("instances %+v", a.Instances)
	}
	// Snapshots: (mon9, 1), (mon9, 2), (mon10, 1), (tue9, 1).
	if len(a.Snapshots) != 4 || a.Snapshots[0].TimeS != 5 || a.Snapshots[0].Events[0].Name != "db file sequential read" ||
		a.Snapshots[1].Instance != "2" || a.Snapshots[3].TimeS != 5 {
		t.Errorf("snapshots %+v", a.Snapshots)
	}
	// Monday 09 h: 4 + 1 + 2; Monday 10 h: 0.6; Tuesday 09 h: 5.
	if a.Pivot.TimeS[0][9] != 7 || a.Pivot.TimeS[0][10] != 0.6 || a.Pivot.TimeS[1][9] != 5 || a.Pivot.Days[0] != "Mon" {
		t.Errorf("pivot Mon 09 %v, Mon 10 %v, Tue 09 %v", a.Pivot.TimeS[0][9], a.Pivot.TimeS[0][10], a.Pivot.TimeS[1][9])
	}
	var pivot float64
	for _, d := range a.Pivot.TimeS {
		for _, v := range d {
			pivot += v
		}
	}
	if !near(pivot, a.TimeS) {
		t.Errorf("pivot sums to %v, total %v", pivot, a.TimeS)
	}
	// Trends: log file sync on instance 1 has a point at every snapshot of
	// instance 1, waits 0 at tue9 where it did not wait.
	for _, tr := range a.Trends {
		if tr.Event == "log file sync" && tr.Instance == "1" {
			if len(tr.Points) != 3 || tr.Points[0].Waits != 500 || tr.Points[0].MeanMs != 2 || tr.Points[1].MeanMs != 2 || tr.Points[2].Waits != 0 {
				t.Errorf("trend %+v", tr)
			}
			return
		}
	}
	t.Error("no trend of log file sync @1")
}

func TestIdleKept(t *testing.T) {
	a := Build(sampleRows(), Options{Idle: true})
	if a.TimeS != 912.6 || a.Events[0].Name != "SQL*Net message from client" || a.IdleLeftOut {
		t.Errorf("with --idle: total %v, top %q", a.TimeS, a.Events[0].Name)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func TestWriteCSV(t *testing.T) {
	rows := []Row{{SnapshotTime: time.Date(2024, 3, 11, 9, 0, 1, 0, time.UTC), Instance: "1", WaitClass: "Application",
		Event: `enq: TX - "row", lock`, Waits: 3, TimeS: 0.7500001}}
	var b bytes.Buffer
	if err := Write(&b, Build(rows, Options{}), FormatCSV, "t"); err != nil {
		t.Fatal(err)
	}
	want := "snapshot_time,instance,wait_class,event,waits,time_s,mean_ms\n" +
		`2024-03-11 09:00:01,1,Application,"enq: TX - ""row"", lock",3,0.75,250.000033` + "\n"
	if b.String() != want {
		t.Errorf("csv\n%s\nwant\n%s", b.String(), want)
	}
}

func TestWriteJSONHTMLTable(t *testing.T) {
	a := Build(sampleRows(), Options{})
	var js bytes.Buffer
	if err := Write(&js, a, FormatJSON, "t"); err != nil {
		t.Fatal(err)
	}
	var back struct {
		TimeS  float64 `json:"time_s"`
		Events []Total `json:"top_events"`
		Rows   []struct {
			Event  string  `json:"event"`
			MeanMs float64 `json:"mean_ms"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.TimeS != a.TimeS || len(back.Events) != len(a.Events) || len(back.Rows) != 6 {
		t.Errorf("json round trip: %+v", back)
	}
	var page bytes.Buffer
	if err := Write(&page, a, FormatHTML, "AWR <x>"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{htmlpage.ContentSecurityPolicy, "<title>AWR &lt;x&gt;</title>", "<h2>Wait classes</h2>",
		"<td>db file sequential read</td><td>User I/O</td><td>3000</td><td>9.000</td><td>3.000</td>", "<polyline", `id="awr-data"`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page.String(), "<script src") || strings.Contains(page.String(), "http://") {
		t.Error("the page fetches something")
	}
	var table bytes.Buffer
	if err := Write(&table, a, FormatTable, ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"12.6 s waited (Idle class left out)", "db file sequential read  3000   9.000   3.000    71.4%", " Mon "} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if err := Write(&table, a, "xml", ""); err == nil {
		t.Error("an unknown format is not an error")
	}
}
