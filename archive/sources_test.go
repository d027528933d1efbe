package archive

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// TestQuerySources restricts a query to named sources, and
// SelectedSources lists the sources a query reads.
func TestQuerySources(t *testing.T) {
	a, _ := openTemp(t, Options{})
	ctx := context.Background()
	start := time.Date(2026, 11, 25, 3, 10, 0, 0, time.UTC)
	for _, src := range []string{"db02", "db01", "idle"} {
		iv := stream.Interval{Source: src, Start: start, Duration: time.Second}
		if src != "idle" {
			h := hist.NewExact(hist.Microsecond, 0)
			_ = h.Record(250)
			iv.Series = []stream.SeriesHist{{Key: stream.Key{Event: "log file sync"}, Hist: h}}
		}
		if err := a.Write(ctx, iv); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		q    Query
		want []string
	}{
		{Query{}, []string{"db01", "db02", "idle"}},
		{Query{Series: "log*"}, []string{"db01", "db02"}},
		{Query{Sources: []string{"db02", "idle"}}, []string{"db02", "idle"}},
		{Query{Series: "log*", Sources: []string{"idle"}}, nil},
	} {
		names, err := a.SelectedSources(ctx, c.q)
		if err != nil || !slices.Equal(names, c.want) && len(names)+len(c.want) > 0 {
			t.Errorf("SelectedSources(%+v) = %v, %v; want %v", c.q, names, err, c.want)
		}
		var read []string
		for _, iv := range readAll(t, a, c.q) {
			read = append(read, iv.Source)
		}
		if !slices.Equal(read, c.want) && len(read)+len(c.want) > 0 {
			t.Errorf("Read(%+v) read %v; want %v", c.q, read, c.want)
		}
	}
}

// TestSetSourceKeep changes the sources' retentions of an open archive:
// a new one applies at the next Maintain, 0 removes one given at Open.
func TestSetSourceKeep(t *testing.T) {
	given := map[string]time.Duration{"a": time.Hour}
	a, _ := openTemp(t, Options{SourceKeep: given})
	given["c"] = time.Hour // the archive keeps its own copy
	a.SetSourceKeep("a", 0)
	a.SetSourceKeep("b", time.Hour)
	hs := realHistograms(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, src := range []string{"a", "b", "c"} {
		if err := a.WriteBatch(ctx, synthetic(src, t0, 3*3600, 1, hs)); err != nil {
			t.Fatal(err)
		}
	}
	now := t0.Add(3 * time.Hour)
	if err := a.Maintain(ctx, now); err != nil {
		t.Fatal(err)
	}
	for src, first := range map[string]time.Time{"a": t0, "b": now.Add(-time.Hour), "c": t0} {
		got := readAll(t, a, Query{Sources: []string{src}, Resolution: Raw})
		if len(got) == 0 || !got[0].Start.Equal(first) {
			t.Errorf("%s: %d windows, want from %v", src, len(got), first)
		}
	}
}
