package oracle

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source/awr"
)

const sysEventFixture = "../awr/testdata/systemevent/awr_system_event_synthetic.csv"

// sysEventAsRows turns the SYNTHETIC extract (source/awr's
// testdata/PROVENANCE.md) into what the snapshot and system-event queries
// return: distinct snapshots, and the event rows as TM9 texts.
func sysEventAsRows(t *testing.T) (data []byte, snaps, events *rows) {
	t.Helper()
	data, err := os.ReadFile(filepath.FromSlash(sysEventFixture))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(recs[0], name) }
	cd, cs, ci, cu, cb, ce := col("DBID"), col("SNAP_ID"), col("INSTANCE_NUMBER"), col("STARTUP_TIME"), col("BEGIN_INTERVAL_TIME"), col("END_INTERVAL_TIME")
	cc, cn, cw, cm := col("WAIT_CLASS"), col("EVENT_NAME"), col("TOTAL_WAITS"), col("TIME_WAITED_MICRO")
	snaps = &rows{columns: selectNames(awrSnapshotQuery)}
	events = &rows{columns: selectNames(awrSystemEventQuery)}
	seen := map[string]bool{}
	for _, r := range recs[1:] {
		snap, _ := strconv.ParseInt(r[cs], 10, 64)
		inst, _ := strconv.ParseInt(r[ci], 10, 64)
		dbid, _ := strconv.ParseInt(r[cd], 10, 64)
		if k := r[cd] + "/" + r[cs] + "/" + r[ci]; !seen[k] {
			seen[k] = true
			snaps.values = append(snaps.values, []any{snap, dbid, inst, r[cb], r[ce], r[cu], "+00:00"})
		}
		events.values = append(events.values, []any{snap, dbid, inst, r[cc], r[cn], r[cw], r[cm]})
	}
	return data, snaps, events
}

// TestAWRSystemEventsMapLikeTheExtractReader: the live range's rows,
// differenced, give exactly the deltas source/awr makes of the file.
func TestAWRSystemEventsMapLikeTheExtractReader(t *testing.T) {
	data, snaps, events := sysEventAsRows(t)
	rs := &recordingRowSource{}
	rs.add("from dba_hist_snapshot", snaps, nil)
	rs.add("dba_hist_system_event e", events, nil)
	const name = "oracle://u@db:1521/S"
	diag := input.NewDiagnostics(nil, 10)
	got, err := readAWRSystemEvents(context.Background(), rs, name, diag, time.UTC, awrRange{from: 1000, to: 1168})
	if err != nil {
		t.Fatal(err)
	}
	fileDiag := input.NewDiagnostics(nil, 10)
	want, err := awr.ReadSystemEvents(bytes.NewReader(data), "file", time.UTC, fileDiag)
	if err != nil {
		t.Fatal(err)
	}
	gd, wd := awr.SystemEventDeltas(got, name, diag), awr.SystemEventDeltas(want, "file", fileDiag)
	if len(gd) != len(wd) || len(gd) == 0 {
		t.Fatalf("%d deltas from the rows, %d from the file", len(gd), len(wd))
	}
	for i := range gd {
		if gd[i] != wd[i] {
			t.Fatalf("delta %d:\n rows %+v\n file %+v", i, gd[i], wd[i])
		}
	}
	if diag.Count(name) != 0 {
		t.Errorf("%d problems", diag.Count(name))
	}
	if len(rs.binds) != 2 || !slices.Equal(rs.binds[1], []any{int64(1000), int64(1168), "1234567890"}) {
		t.Errorf("binds %v: want the range and the DBID the snapshots gave", rs.binds)
	}
}

func TestAWRSystemEventsBadRows(t *testing.T) {
	_, snaps, events := sysEventAsRows(t)
	events.values = append(events.values[:4:4],
		[]any{int64(1001), int64(1234567890), int64(1), "Commit", "log file sync", "12x", "5"},
		[]any{int64(99), int64(1234567890), int64(1), "Commit", "log file sync", "1", "5"})
	rs := &fixtureRowSource{}
	rs.add("from dba_hist_snapshot", snaps, nil)
	rs.add("dba_hist_system_event e", events, nil)
	var msgs bytes.Buffer
	diag := input.NewDiagnostics(&msgs, 10)
	got, err := readAWRSystemEvents(context.Background(), rs, "o", diag, time.UTC, awrRange{last: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 || !strings.Contains(msgs.String(), "2 of 6 DBA_HIST_SYSTEM_EVENT rows skipped (first: row 5: TOTAL_WAITS \"12x\")") {
		t.Errorf("%d rows kept; messages %s", len(got), msgs.String())
	}
	empty := &fixtureRowSource{}
	empty.add("from dba_hist_snapshot", &rows{columns: selectNames(awrSnapshotQuery)}, nil)
	if _, err := readAWRSystemEvents(context.Background(), empty, "o", diag, time.UTC, awrRange{last: 3}); err == nil {
		t.Error("no snapshots is not an error")
	}
}
