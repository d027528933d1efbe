package archive

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

var ctx = context.Background()

func TestRoundTripRealSample(t *testing.T) {
	a, _ := openTemp(t, Options{})
	want := realIntervals(t)
	for _, iv := range want {
		if err := a.Write(ctx, iv); err != nil {
			t.Fatal(err)
		}
	}
	sameIntervals(t, readAll(t, a, Query{Resolution: Raw}), want)
	sameIntervals(t, readAll(t, a, Query{}), want) // auto: raw is the finest
}

func TestRoundTripGapsZonesCustomAndMeans(t *testing.T) {
	a, _ := openTemp(t, Options{})
	cest := time.FixedZone("CEST", 7200)
	t0 := time.Date(2026, 5, 2, 10, 0, 0, 0, cest)
	custom, err := hist.NewCustom(hist.Microsecond, []float64{20, 40, 60, 100, math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	custom.Counts = []float64{3, 0.5, 0, 7}
	custom.ZeroCount, custom.Sum, custom.TopOpen = 1, 1234.5, true
	pow := &hist.Histogram{Unit: hist.Nanosecond, Scale: 6, ZeroPow: 0, Offset: 640, Counts: []float64{1, 0, 0, 2}, Sum: 3e3, SumExact: true}
	want := []stream.Interval{
		{Source: "db1", Start: t0, Duration: time.Second, Series: []stream.SeriesHist{{Key: stream.Key{Event: "read", Instance: "1"}, Hist: pow}, {Key: stream.Key{Event: "nfs"}, Hist: custom}},
			Means: []stream.SeriesMean{{Key: stream.Key{Event: "SELECT 1"}, Count: 40, Sum: 12.5, Unit: hist.Millisecond}}},
		{Source: "db1", Start: t0.Add(time.Second), Duration: time.Second},                // observed, nothing
		{Source: "db1", Start: t0.Add(2 * time.Second), Duration: time.Second, Gap: true}, // not observed
		{Source: "db1", Start: t0.Add(3 * time.Second), Duration: 1500 * time.Millisecond, Means: []stream.SeriesMean{{Key: stream.Key{Event: "SELECT 1"}, Count: 2.5, Sum: 1, Unit: hist.Microsecond},
			// A host figure: its quantity is kept.
			{Key: stream.Key{Event: "disk.%util", Instance: "sda"}, Count: 1500, Sum: 31250, Unit: stream.QuantityUnit, Quantity: stream.Percent}}},
	}
	if err := a.WriteBatch(ctx, want); err != nil {
		t.Fatal(err)
	}
	sameIntervals(t, readAll(t, a, Query{}), want)
	// A window: From inclusive, To exclusive.
	sameIntervals(t, readAll(t, a, Query{From: t0.Add(time.Second), To: t0.Add(3 * time.Second)}), want[1:3])
	// Writing again replaces: nothing doubles, and a series the new
	// version lacks goes.
	if err := a.WriteBatch(ctx, want); err != nil {
		t.Fatal(err)
	}
	sameIntervals(t, readAll(t, a, Query{}), want)
	again := want[0]
	again.Series, again.Means = again.Series[1:], nil
	if err := a.Write(ctx, again); err != nil {
		t.Fatal(err)
	}
	sameIntervals(t, readAll(t, a, Query{}), append([]stream.Interval{again}, want[1:]...))
}

func TestSeriesPattern(t *testing.T) {
	a, _ := openTemp(t, Options{})
	hs := realHistograms(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, src := range []string{"mysql://db1", "iotest:/u01"} {
		if err := a.WriteBatch(ctx, synthetic(src, t0, 10, 3, hs)); err != nil {
			t.Fatal(err)
		}
	}
	series, err := a.Series(ctx)
	if err != nil || len(series) != 6 {
		t.Fatalf("series %v, %v", series, err)
	}
	got := readAll(t, a, Query{Series: eventName(1)})
	if len(got) != 20 || len(got[0].Series) != 1 || got[0].Series[0].Key.Event != eventName(1) {
		t.Fatalf("by event: %d intervals, first %+v", len(got), got[0])
	}
	got = readAll(t, a, Query{Series: "mysql://*"})
	if len(got) != 10 || got[0].Source != "mysql://db1" || len(got[0].Series) != 3 {
		t.Fatalf("by source: %d intervals", len(got))
	}
	if got := readAll(t, a, Query{Series: "nothing"}); len(got) != 0 {
		t.Fatalf("no match: %d intervals", len(got))
	}
	if err := CheckPattern("[a-"); err == nil {
		t.Fatal("bad pattern accepted")
	}
}

// TestDownsampleExact merges 1-second real histograms into minutes: counts,
// bucket by bucket, and sums add exactly; gaps and observed time carry over.
func TestDownsampleExact(t *testing.T) {
	a, _ := openTemp(t, Options{})
	hs := realHistograms(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ivs := synthetic("db", t0, 180, 2, hs)
	for i := 60; i < 120; i++ { // the second minute: half gaps, half observed
		if i%2 == 0 {
			ivs[i].Gap, ivs[i].Series = true, nil
		}
	}
	if err := a.WriteBatch(ctx, ivs); err != nil {
		t.Fatal(err)
	}
	gapOnly := stream.Interval{Source: "db", Start: t0.Add(5 * time.Minute), Duration: time.Second, Gap: true}
	if err := a.Write(ctx, gapOnly); err != nil {
		t.Fatal(err)
	}
	if err := a.Maintain(ctx, t0.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, a, Query{Resolution: time.Minute})
	if len(got) != 4 {
		t.Fatalf("%d minute windows, want 4", len(got))
	}
	for m := 0; m < 3; m++ {
		iv := got[m]
		if !iv.Start.Equal(t0.Add(time.Duration(m)*time.Minute)) || iv.Gap {
			t.Fatalf("minute %d: %+v", m, iv)
		}
		wantDur := time.Minute
		if m == 1 {
			wantDur = 30 * time.Second
		}
		if iv.Duration != wantDur {
			t.Fatalf("minute %d observed %s, want %s", m, iv.Duration, wantDur)
		}
		for _, s := range iv.Series {
			want := &hist.Histogram{}
			for _, raw := range ivs[m*60 : m*60+60] {
				for _, rs := range raw.Series {
					if rs.Key == s.Key {
						want.Merge(rs.Hist)
					}
				}
			}
			if s.Hist.Count() != want.Count() || s.Hist.Sum != want.Sum || s.Hist.ZeroCount != want.ZeroCount {
				t.Fatalf("minute %d %s: count %v sum %v, want %v %v", m, s.Key, s.Hist.Count(), s.Hist.Sum, want.Count(), want.Sum)
			}
			for i, c := range want.Counts {
				if s.Hist.Counts[i+want.Offset-s.Hist.Offset] != c {
					t.Fatalf("minute %d %s bucket %d: %v, want %v", m, s.Key, want.Offset+i, s.Hist.Counts[i], c)
				}
			}
		}
	}
	if !got[3].Gap || got[3].Duration != time.Minute {
		t.Fatalf("a minute of gaps: %+v", got[3])
	}
	// Auto picks raw while raw reaches back; the merged window agrees.
	if n := len(readAll(t, a, Query{From: t0})); n != 181 {
		t.Fatalf("auto read %d intervals, want the 181 raw ones", n)
	}
	totals, err := a.Merged(ctx, Query{Resolution: time.Minute})
	if err != nil || len(totals) != 2 {
		t.Fatalf("merged %v, %v", totals, err)
	}
	rawTotals, _ := a.Merged(ctx, Query{Resolution: Raw})
	for i := range totals {
		if totals[i].Hist.Count() != rawTotals[i].Hist.Count() || !near(totals[i].Hist.Sum, rawTotals[i].Hist.Sum) {
			t.Fatalf("minute totals %v/%v, raw %v/%v", totals[i].Hist.Count(), totals[i].Hist.Sum, rawTotals[i].Hist.Count(), rawTotals[i].Hist.Sum)
		}
	}
}

func TestRetentionByAge(t *testing.T) {
	a, _ := openTemp(t, Options{Tiers: []Tier{{Keep: time.Hour}, {Step: time.Minute, Keep: 3 * time.Hour}}})
	hs := realHistograms(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := a.WriteBatch(ctx, synthetic("db", t0, 4*3600, 1, hs)); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(4 * time.Hour)
	if err := a.Maintain(ctx, now); err != nil {
		t.Fatal(err)
	}
	raw := readAll(t, a, Query{Resolution: Raw})
	if len(raw) != 3600 || !raw[0].Start.Equal(now.Add(-time.Hour)) {
		t.Fatalf("raw: %d intervals from %s", len(raw), raw[0].Start)
	}
	minutes := readAll(t, a, Query{Resolution: time.Minute})
	// Minutes built up to one step before now, kept 3 hours.
	if len(minutes) != 179 || !minutes[0].Start.Equal(now.Add(-3*time.Hour)) {
		t.Fatalf("minutes: %d from %s", len(minutes), minutes[0].Start)
	}
	// Auto: the query's start is older than raw data, so minutes.
	if got := readAll(t, a, Query{From: now.Add(-2 * time.Hour)}); len(got) != 119 {
		t.Fatalf("auto over 2 h: %d windows, want 119 minutes", len(got))
	}
}

// TestSourceRetention: a source with a shorter retention (a serve job's)
// loses its older data in every tier, a straddling packed hour included;
// the other source keeps the tiers' retention.
func TestSourceRetention(t *testing.T) {
	a, _ := openTemp(t, Options{Tiers: []Tier{{Keep: 3 * time.Hour}, {Step: time.Minute}}, SourceKeep: map[string]time.Duration{"short": 90 * time.Minute}})
	hs := realHistograms(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, src := range []string{"short", "long"} {
		if err := a.WriteBatch(ctx, synthetic(src, t0, 4*3600, 2, hs)); err != nil {
			t.Fatal(err)
		}
	}
	now := t0.Add(4 * time.Hour)
	if err := a.Maintain(ctx, now); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		src   string
		res   time.Duration
		first time.Time
	}{
		{"short", Raw, now.Add(-90 * time.Minute)},
		{"short", time.Minute, now.Add(-90 * time.Minute)},
		{"long", Raw, now.Add(-3 * time.Hour)},
		{"long", time.Minute, t0},
	} {
		got := readAll(t, a, Query{Series: c.src, Resolution: c.res})
		if len(got) == 0 || !got[0].Start.Equal(c.first) || len(got[0].Series) != 2 {
			t.Fatalf("%s at %v: %d windows from %v, want from %v", c.src, c.res, len(got), got[0].Start, c.first)
		}
	}
	if err := a.IntegrityCheck(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRetentionBySize(t *testing.T) {
	a, _ := openTemp(t, Options{MaxBytes: 2 << 20, Tiers: []Tier{{}}})
	hs := realHistograms(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for h := 0; h < 6; h++ {
		if err := a.WriteBatch(ctx, synthetic("db", t0.Add(time.Duration(h)*time.Hour), 3600, 4, hs)); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Maintain(ctx, t0.Add(6*time.Hour)); err != nil {
		t.Fatal(err)
	}
	used, err := a.usedBytes(ctx)
	if err != nil || used > 2<<20 {
		t.Fatalf("used %d bytes, %v", used, err)
	}
	got := readAll(t, a, Query{})
	if len(got) == 0 || !got[len(got)-1].Start.Equal(t0.Add(6*time.Hour-time.Second)) || got[0].Start.Minute() != 0 {
		t.Fatalf("kept %d intervals, %s to %s: want the newest whole hours", len(got), got[0].Start, got[len(got)-1].Start)
	}
}

func TestUncleanCloseRunsIntegrityCheck(t *testing.T) {
	a, dir := openTemp(t, Options{})
	if err := a.Write(ctx, synthetic("db", time.Unix(1e9, 0), 1, 1, realHistograms(t))[0]); err != nil {
		t.Fatal(err)
	}
	if clean, _ := a.meta(ctx, metaClean); clean != "no" {
		t.Fatalf("open archive marked %q", clean)
	}
	a.Close()
	b, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.setMeta(ctx, metaClean, "no")
	b.db.Close() // as if killed: no clean mark
	// Damage every page but the first, as a torn disk would.
	path := filepath.Join(dir, DBName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for page := 4096; page+16 < len(data); page += 4096 {
		for i := page; i < page+12; i++ { // the b-tree page headers
			data[i] ^= 0x55
		}
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if c, err := Open(dir, Options{}); err == nil {
		c.Close()
		t.Fatal("a damaged archive opened after an unclean close")
	} else {
		t.Log(err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing"), Options{ReadOnly: true}); err == nil {
		t.Fatal("read-only open of a missing archive")
	}
	notDB := filepath.Join(dir, "x.txt")
	os.WriteFile(notDB, []byte("hello, not sqlite"), 0o600)
	if _, err := Open(notDB, Options{}); err == nil {
		t.Fatal("opened a text file")
	}
	if _, err := Open(dir, Options{Tiers: []Tier{{Step: time.Minute}}}); err == nil {
		t.Fatal("tiers without raw accepted")
	}
	if _, ok := DBPath(dir); ok {
		t.Fatal("empty dir detected as an archive")
	}
}

func TestPatterns(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"*example_latency_data.txt", "/var/lib/traces/example_latency_data.txt", true},
		{"mysql://*", "mysql://app@db01:3306/", true},
		{"log file*", "log file sync", true},
		{"log file*", "a log file sync", false},
		{"db file ?equential read", "db file sequential read", true},
		{"[dl]* read", "db file scattered read", true},
		{"[^d]* read", "db file scattered read", false},
		{"a.b", "axb", false},
		{`\*`, "*", true},
		{"", "anything", true},
	} {
		m, err := Query{Series: c.pattern}.matcher()
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if got := m(SeriesInfo{Key: stream.Key{Event: c.name}}); got != c.want {
			t.Errorf("%q matching %q: %v", c.pattern, c.name, got)
		}
	}
	for _, bad := range []string{"[a-", "[]", "[z-a]"} {
		if err := CheckPattern(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzPattern: any --series pattern compiles or fails with an error naming
// it, and never panics when matching.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"*", "log file*", "[a-z]?", `\*`, "[", "[^a]", "mysql://*"} {
		f.Add(s, "log file sync")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		m, err := Query{Series: pattern}.matcher()
		if err != nil {
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", pattern)) {
				t.Fatalf("error %q does not name the pattern", err)
			}
			return
		}
		m(SeriesInfo{Key: stream.Key{Event: name}, Source: name})
		if !strings.ContainsAny(pattern, `*?[\`) && m(SeriesInfo{Key: stream.Key{Event: pattern}}) != true {
			t.Fatalf("a literal pattern %q does not match itself", pattern)
		}
	})
}

func TestOtherSQLiteDatabaseIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	other, err := Open(path, Options{}) // any SQLite file: make one with a foreign table
	if err != nil {
		t.Fatal(err)
	}
	other.db.Exec("DROP TABLE windows")
	other.Close()
	if _, err := Open(path, Options{ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "not a latscope archive") {
		t.Fatalf("a foreign database: %v", err)
	}
}

// TestReadWhileWriting reads an archive (read-only, as the SOURCE does)
// while a writer appends: WAL readers see whole intervals only.
func TestReadWhileWriting(t *testing.T) {
	w, dir := openTemp(t, Options{})
	hs := realHistograms(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	done := make(chan error)
	go func() {
		for i := 0; i < 300; i++ {
			if err := w.Write(ctx, synthetic("db", t0.Add(time.Duration(i)*time.Second), 1, 20, hs[i%len(hs):])[0]); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	r, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for reading := true; reading; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			reading = false
		default:
		}
		for _, iv := range readAll(t, r, Query{}) {
			if len(iv.Series) != 20 {
				t.Fatalf("a reader saw an interval with %d of its 20 series", len(iv.Series))
			}
		}
	}
	if n := len(readAll(t, r, Query{})); n != 300 {
		t.Fatalf("read %d intervals after the writer finished, want 300", n)
	}
}

// TestOneWriterAtATime: a second writer on the same data directory is
// refused with a message saying who writes it and that reading works; a
// reader opens meanwhile; the lock goes with Close.
func TestOneWriterAtATime(t *testing.T) {
	dir := t.TempDir()
	a, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir, Options{})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) || !strings.Contains(err.Error(), "latscope report "+dir) {
		t.Fatalf("second writer: %v", err)
	}
	r, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("reader beside the writer: %v", err)
	}
	r.Close()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("writer after the first closed: %v", err)
	}
	b.Close()
}

// TestDownsampleHostFigure merges a host figure's seconds into minutes:
// %util stays busy ms × 100 over elapsed ms of the whole minute, with its
// quantity. SYNTHETIC: busy ms 0, 1, 2, ... per second.
func TestDownsampleHostFigure(t *testing.T) {
	a, _ := openTemp(t, Options{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ivs []stream.Interval
	for i := range 120 {
		ivs = append(ivs, stream.Interval{Source: "host", Start: t0.Add(time.Duration(i) * time.Second), Duration: time.Second,
			Means: []stream.SeriesMean{{Key: stream.Key{Event: "disk.%util", Instance: "sda"}, Count: 1000, Sum: float64(i) * 100,
				Unit: stream.QuantityUnit, Quantity: stream.Percent}}})
	}
	if err := a.WriteBatch(ctx, ivs); err != nil {
		t.Fatal(err)
	}
	if err := a.Maintain(ctx, t0.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, a, Query{Resolution: time.Minute})
	if len(got) != 2 {
		t.Fatalf("%d minute windows, want 2", len(got))
	}
	for m, iv := range got {
		busy := 0.0
		for i := 60 * m; i < 60*m+60; i++ {
			busy += float64(i)
		}
		if len(iv.Means) != 1 || iv.Means[0].Quantity != stream.Percent || !near(iv.Means[0].Mean(), busy*100/60000) {
			t.Errorf("minute %d: %+v, want %v %%", m, iv.Means, busy*100/60000)
		}
	}
}
