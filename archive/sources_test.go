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
