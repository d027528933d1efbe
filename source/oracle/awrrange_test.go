package oracle

import (
	"context"
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
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/awr"
	"github.com/latscope/latscope/stream"
)

// recordingRowSource is a fixtureRowSource that also keeps each query's
// binds, to check what the AWR range asks for.
type recordingRowSource struct {
	fixtureRowSource
	binds [][]any
}

func (r *recordingRowSource) query(ctx context.Context, text string, args ...any) (*rows, error) {
	r.binds = append(r.binds, args)
	return r.fixtureRowSource.query(ctx, text, args...)
}

// describe renders intervals as text: source (without the name), window,
// gap, and per series its buckets "lower-upper:count" (capped flagged) and
// estimated sum.
func describe(ivs []stream.Interval, name string) []string {
	var out []string
	for _, iv := range ivs {
		s := fmt.Sprintf("%s %s+%s", strings.TrimPrefix(iv.Source, name), iv.Start.UTC().Format("2006-01-02 15:04:05.000"), iv.Duration)
		if iv.Gap {
			s += " gap"
		}
		series := slices.Clone(iv.Series)
		slices.SortFunc(series, func(a, b stream.SeriesHist) int { return strings.Compare(a.Key.Event, b.Key.Event) })
		for _, se := range series {
			s += fmt.Sprintf(" | %s@%s sum=%g:", se.Key.Event, se.Key.Instance, se.Hist.Sum)
			for _, b := range se.Hist.Buckets() {
				s += fmt.Sprintf(" %g-%g:%g", b.Lower, b.Upper, b.Count)
				if b.Capped {
					s += " capped"
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// rac19cAsRows turns source/awr's awr_19c_rac.csv (SYNTHETIC, see its
// testdata/PROVENANCE.md: no real AWR export can be made here) into the
// values the two AWR queries return: the distinct snapshots, and the
// histogram rows as TM9 texts. Line 49, cut short, is left out (a query
// result has no such row); its other bad rows (a duplicate bucket, a count
// "12x4", a bound 3) are kept, as a damaged database would return them.
func rac19cAsRows(t *testing.T) (snaps, hists *rows) {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "awr", "testdata", "awr_19c_rac.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := recs[0]
	col := func(name string) int { return slices.Index(head, name) }
	cd, cs, ci, cu, cb, ce := col("DBID"), col("SNAP_ID"), col("INSTANCE_NUMBER"), col("STARTUP_TIME"), col("BEGIN_INTERVAL_TIME"), col("END_INTERVAL_TIME")
	cw, cn, cm, cc := col("WAIT_CLASS"), col("EVENT_NAME"), col("WAIT_TIME_MILLI"), col("WAIT_COUNT")
	snaps = &rows{columns: selectNames(awrSnapshotQuery)}
	hists = &rows{columns: selectNames(awrHistogramQuery)}
	seen := map[string]bool{}
	for _, r := range recs[1:] {
		if len(r) != len(head) {
			continue
		}
		snap, _ := strconv.ParseInt(r[cs], 10, 64)
		inst, _ := strconv.ParseInt(r[ci], 10, 64)
		dbid, _ := strconv.ParseInt(r[cd], 10, 64)
		if k := r[cd] + "/" + r[cs] + "/" + r[ci]; !seen[k] {
			seen[k] = true
			snaps.values = append(snaps.values, []any{snap, dbid, inst, r[cb], r[ce], r[cu], "+00:00"})
		}
		hists.values = append(hists.values, []any{snap, dbid, inst, r[cn], r[cw], r[cm], r[cc]})
	}
	return snaps, hists
}

// TestAWRRangeMapsLikeTheExportReader runs the AWR range over the rows of
// awr_19c_rac.csv and checks it emits exactly what source/awr's export
// reader makes of the file (the windows of TestAWR19cRAC there: deltas per
// instance, snapshot 203 of instance 1 missing, instance 2's restart, the
// 2^54 ms bucket capped), with the same sums.
func TestAWRRangeMapsLikeTheExportReader(t *testing.T) {
	snaps, hists := rac19cAsRows(t)
	rs := &recordingRowSource{}
	rs.add("from dba_hist_snapshot", snaps, nil)
	rs.add("dba_hist_event_histogram h", hists, nil)
	const name = "oracle://u@db:1521/S"
	diag := input.NewDiagnostics(nil, 10)
	var got []stream.Interval
	err := runAWR(context.Background(), rs, name, diag, source.Options{}, awrRange{from: 200, to: 205},
		strings.Join(DefaultEvents, ","), func(iv stream.Interval) error {
			if err := iv.Validate(); err != nil {
				t.Fatal(err)
			}
			got = append(got, iv)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	// the file, read by the export reader (batch, UTC)
	f, err := os.Open(filepath.Join("..", "awr", "testdata", "awr_19c_rac.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fileSrc, err := awr.Format().Open(source.Input{Name: "file", Reader: f, Diag: input.NewDiagnostics(nil, 10),
		ModTime: time.Date(2024, 3, 16, 0, 0, 0, 0, time.UTC)}, source.Options{Location: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	var want []stream.Interval
	if err := fileSrc.Run(context.Background(), func(iv stream.Interval) error { want = append(want, iv); return nil }); err != nil {
		t.Fatal(err)
	}
	g, w := describe(got, name), describe(want, "file")
	if !slices.Equal(g, w) {
		t.Fatalf("live AWR range:\n%s\nexport reader:\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
	wantWindows := []string{
		"@1 2024-03-15 10:00:01.234+1h0m0.883s", "@2 2024-03-15 10:00:02.002+59m59.553s",
		"@2 2024-03-15 11:00:01.555+1h0m0.865s", "@1 2024-03-15 11:00:02.117+59m59.784s",
		"@1 2024-03-15 12:00:01.901+2h0m0.444s", "@2 2024-03-15 12:00:02.420+19m57.58s gap",
		"@2 2024-03-15 12:20:00.000+40m3.003s", "@2 2024-03-15 13:00:03.003+59m58.007s",
	}
	for i, s := range g {
		if i >= len(wantWindows) || !strings.HasPrefix(s, wantWindows[i]) {
			t.Errorf("window %d: %s, want %s", i, s, wantWindows[i])
		}
	}
	if !strings.Contains(g[3], "4.194304e+06-8.388608e+06:1 capped") {
		t.Errorf("the 2^54 ms bucket is not read as [2^22, 2^23) ms capped: %s", g[3])
	}
	// the malformed rows: "12x4" skipped while mapping, the duplicate and
	// the bound 3 by the Mapper
	if n := diag.Count(name); n != 3 {
		t.Errorf("%d problems, want 3: %+v", n, diag.Problems())
	}
	// binds: the range, then the SNAP_IDs found (the file's last is 204),
	// the DBID and the events
	wantBinds := [][]any{{200, 205, 0}, {int64(200), int64(204), "3141592653", strings.Join(DefaultEvents, ",")}}
	if fmt.Sprint(rs.binds) != fmt.Sprint(wantBinds) {
		t.Errorf("binds %v, want %v", rs.binds, wantBinds)
	}
}

// TestAWRRangeTotalsIndependent checks the waits of db file sequential read
// on instance 1 (no restart, snapshot 203 missing) over --awr-last 5 against
// the last snapshot's counts minus the first's, summed straight from the rows.
func TestAWRRangeTotalsIndependent(t *testing.T) {
	snaps, hists := rac19cAsRows(t)
	rs := &fixtureRowSource{}
	rs.add("from dba_hist_snapshot", snaps, nil)
	rs.add("dba_hist_event_histogram h", hists, nil)
	var got []stream.Interval
	if err := runAWR(context.Background(), rs, "o", input.NewDiagnostics(nil, 10), source.Options{}, awrRange{last: 5},
		"x", func(iv stream.Interval) error { got = append(got, iv); return nil }); err != nil {
		t.Fatal(err)
	}
	first, last := map[string]float64{}, map[string]float64{}
	for _, v := range hists.values {
		if v[2] != int64(1) || v[3] != "db file sequential read" {
			continue
		}
		c, err := strconv.ParseFloat(v[6].(string), 64)
		if err != nil {
			continue
		}
		b := v[5].(string)
		switch v[0] {
		case int64(200):
			first[b] = c
		case int64(204):
			if _, dup := last[b]; !dup {
				last[b] = c
			}
		}
	}
	var want float64
	for b, c := range last {
		want += c - first[b]
	}
	var total float64
	for _, iv := range got {
		if iv.Source != "o@1" {
			continue
		}
		for _, s := range iv.Series {
			if s.Key.Event == "db file sequential read" {
				total += s.Hist.Count()
			}
		}
	}
	if total != want || want == 0 {
		t.Errorf("instance 1 db file sequential read: %g waits, want %g", total, want)
	}
}

// synthRows builds SYNTHETIC rows for one instance (hand-made, following
// DBA_HIST_SNAPSHOT and DBA_HIST_EVENT_HISTOGRAM exactly): snapshots as
// (snap_id, end time, startup time) and per snapshot the cumulative counts
// of "log file sync" by WAIT_TIME_MILLI.
type synthSnap struct {
	snap    int64
	end     string
	startup string
	counts  map[string]string // bound → count (TM9 texts)
}

func synthRows(list []synthSnap) (snaps, hists *rows) {
	snaps = &rows{columns: selectNames(awrSnapshotQuery)}
	hists = &rows{columns: selectNames(awrHistogramQuery)}
	for i, s := range list {
		begin := s.startup
		if i > 0 {
			begin = list[i-1].end
		}
		snaps.values = append(snaps.values, []any{s.snap, int64(42), int64(1), begin, s.end, s.startup, "+01:00"})
		bounds := make([]string, 0, len(s.counts))
		for b := range s.counts {
			bounds = append(bounds, b)
		}
		slices.Sort(bounds)
		for _, b := range bounds {
			hists.values = append(hists.values, []any{s.snap, int64(42), int64(1), "log file sync", "Commit", b, s.counts[b]})
		}
	}
	return snaps, hists
}

// TestAWRRangeSynthetic: a missing snapshot, a restart and the capped top
// bucket, in rows made by hand (SYNTHETIC). Times have no offset: the
// database's DB_UTC_OFFSET (+01:00) places them. Sums by the midpoint rule,
// worked out by hand: 10·0.5 + 10·1.5 = 20; 20·0.5 + 1.5 + 1.5·2^22 =
// 6291467.5; 4·0.5 + 6 = 8.
func TestAWRRangeSynthetic(t *testing.T) {
	const up1, up2 = "2024-05-01 08:00:00.000", "2024-05-02 10:30:00.000"
	snaps, hists := synthRows([]synthSnap{
		{10, "2024-05-02 08:00:00.000", up1, map[string]string{"1": "100", "2": "50"}},
		{11, "2024-05-02 09:00:00.000", up1, map[string]string{"1": "110", "2": "60"}},
		// snapshot 12 is missing: 11 → 13 is one two-hour window; a wait in
		// the 2^54 ms top bucket is read as [2^22, 2^23) ms and flagged
		{13, "2024-05-02 11:00:00.000", up1, map[string]string{"1": "130", "2": "61", "18014398509481984": "1"}},
		// a new STARTUP_TIME, 10:30, before the previous snapshot (11:00):
		// the whole window 11:00–12:00 is a gap and 14 the new baseline
		{14, "2024-05-02 12:00:00.000", up2, map[string]string{"1": "5", "4": "2"}},
		{15, "2024-05-02 13:00:00.000", up2, map[string]string{"1": "9", "4": "2", "8": "1"}},
	})
	rs := &fixtureRowSource{}
	rs.add("from dba_hist_snapshot", snaps, nil)
	rs.add("dba_hist_event_histogram h", hists, nil)
	diag := input.NewDiagnostics(nil, 10)
	var got []stream.Interval
	if err := runAWR(context.Background(), rs, "o", diag, source.Options{}, awrRange{from: 10, to: 15}, "log file sync",
		func(iv stream.Interval) error { got = append(got, iv); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"@1 2024-05-02 07:00:00.000+1h0m0s | log file sync@1 sum=20: 0-1:10 1-2:10",
		"@1 2024-05-02 08:00:00.000+2h0m0s | log file sync@1 sum=6.2914675e+06: 0-1:20 1-2:1 4.194304e+06-8.388608e+06:1 capped",
		"@1 2024-05-02 10:00:00.000+1h0m0s gap",
		"@1 2024-05-02 11:00:00.000+1h0m0s | log file sync@1 sum=8: 0-1:4 4-8:1",
	}
	if g := describe(got, "o"); !slices.Equal(g, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(strings.Join(diag.Warnings(), "\n"), "restarted between") {
		t.Errorf("no restart warning: %v", diag.Warnings())
	}

	// a restart inside the window: the counts since startup are an interval
	snaps, hists = synthRows([]synthSnap{
		{20, "2024-05-02 08:00:00.000", up1, map[string]string{"1": "100"}},
		{21, "2024-05-02 09:00:00.000", "2024-05-02 08:40:00.000", map[string]string{"1": "7"}},
	})
	rs = &fixtureRowSource{}
	rs.add("from dba_hist_snapshot", snaps, nil)
	rs.add("dba_hist_event_histogram h", hists, nil)
	got = nil
	if err := runAWR(context.Background(), rs, "o", input.NewDiagnostics(nil, 10), source.Options{Location: time.UTC}, awrRange{last: 1}, "log file sync",
		func(iv stream.Interval) error { got = append(got, iv); return nil }); err != nil {
		t.Fatal(err)
	}
	want = []string{ // --tz UTC given: the times are read in UTC, not in DB_UTC_OFFSET
		"@1 2024-05-02 08:00:00.000+40m0s gap",
		"@1 2024-05-02 08:40:00.000+20m0s | log file sync@1 sum=3.5: 0-1:7",
	}
	if g := describe(got, "o"); !slices.Equal(g, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

// TestAWRRangeRowsWithoutSnapshot: histogram rows whose snapshot is not in
// the DBA_HIST_SNAPSHOT result (SYNTHETIC: purged between the two queries)
// and unreadable values are skipped and counted once per run.
func TestAWRRangeRowsWithoutSnapshot(t *testing.T) {
	snaps, hists := synthRows([]synthSnap{
		{10, "2024-05-02 08:00:00.000", "2024-05-01 08:00:00.000", map[string]string{"1": "100"}},
		{11, "2024-05-02 09:00:00.000", "2024-05-01 08:00:00.000", map[string]string{"1": "110"}},
	})
	hists.values = append(hists.values,
		[]any{int64(12), int64(42), int64(1), "log file sync", "Commit", "1", "120"},
		[]any{int64(11), int64(42), int64(1), "log file sync", "Commit", "2", "1.5e"})
	s, err := readSnapshots(snaps, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	out, bad := awrRows(hists, s)
	if len(out) != 2 || bad != "2 of 4 DBA_HIST_EVENT_HISTOGRAM rows skipped (first: row 3: no DBA_HIST_SNAPSHOT row for snapshot 12 of instance 1)" {
		t.Errorf("%d rows, %q", len(out), bad)
	}
	// an empty range is a warning, not an error
	rs := &fixtureRowSource{}
	rs.add("from dba_hist_snapshot", &rows{columns: snaps.columns}, nil)
	diag := input.NewDiagnostics(nil, 10)
	if err := runAWR(context.Background(), rs, "o", diag, source.Options{}, awrRange{from: 1, to: 2}, "x",
		func(stream.Interval) error { t.Fatal("emitted"); return nil }); err != nil {
		t.Fatal(err)
	}
	if w := diag.Warnings(); len(w) != 1 || !strings.Contains(w[0], "no AWR snapshots of the current database in snapshots 1 to 2") {
		t.Errorf("warnings %v", w)
	}
	// a failed query names the view
	rs = &fixtureRowSource{}
	rs.add("from dba_hist_snapshot", nil, fmt.Errorf("ORA-00942: table or view does not exist"))
	err = runAWR(context.Background(), rs, "o", diag, source.Options{}, awrRange{last: 3}, "x", nil)
	if err == nil || err.Error() != "o: DBA_HIST_SNAPSHOT: ORA-00942: table or view does not exist" {
		t.Errorf("error %v", err)
	}
}

func TestAWRRangeOptions(t *testing.T) {
	cases := []struct {
		db     source.DBOptions
		ok     bool
		errSub string
	}{
		{source.DBOptions{}, false, ""},
		{source.DBOptions{AWRFrom: 3, AWRTo: 9}, true, ""},
		{source.DBOptions{AWRLast: 4}, true, ""},
		{source.DBOptions{AWRFrom: 3}, true, "go together"},
		{source.DBOptions{AWRFrom: 9, AWRTo: 9}, true, "must be below"},
		{source.DBOptions{AWRLast: 2, AWRTo: 9}, true, "not both"},
		{source.DBOptions{AWRLast: -1}, true, "positive"},
	}
	for _, c := range cases {
		_, ok, err := awrRangeOf(c.db)
		if ok != c.ok || (err == nil) != (c.errSub == "") || (err != nil && !strings.Contains(err.Error(), c.errSub)) {
			t.Errorf("%+v: ok %v err %v", c.db, ok, err)
		}
	}
	if _, err := open("//u:pw@db:1521/S", source.Options{DB: source.DBOptions{AWRFrom: 5}}, nil); err == nil ||
		strings.Contains(err.Error(), "pw") || !strings.Contains(err.Error(), "oracle://u@db:1521/S") {
		t.Errorf("open with a half range: %v", err)
	}
}
