package archive

import (
	"testing"
	"time"
)

// TestLatestEnd finds a source's newest window past a packed hour, at a
// tier too, and nothing for a source the archive does not have.
func TestLatestEnd(t *testing.T) {
	a, _ := openTemp(t, Options{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ivs := synthetic("db", t0, 2*3600+30, 2, realHistograms(t))
	if err := a.WriteBatch(ctx, ivs[:3600]); err != nil {
		t.Fatal(err)
	}
	if err := a.WriteBatch(ctx, ivs[3600:]); err != nil { // the first hour is packed
		t.Fatal(err)
	}
	end, ok, err := a.LatestEnd(ctx, "db")
	if want := t0.Add((2*3600 + 30) * time.Second); err != nil || !ok || !end.Equal(want) {
		t.Errorf("LatestEnd = %v, %v, %v; want %v", end, ok, err, want)
	}
	if _, ok, err := a.LatestEnd(ctx, "nosuch"); ok || err != nil {
		t.Errorf("an unknown source: %v, %v", ok, err)
	}
}

// TestQueryIDs reads only the series asked for by id, with every window.
func TestQueryIDs(t *testing.T) {
	a, _ := openTemp(t, Options{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := a.WriteBatch(ctx, synthetic("db", t0, 10, 3, realHistograms(t))); err != nil {
		t.Fatal(err)
	}
	infos, err := a.Series(ctx)
	if err != nil || len(infos) != 3 {
		t.Fatalf("series %v, %v", infos, err)
	}
	got := readAll(t, a, Query{IDs: []int64{infos[1].ID}})
	if len(got) != 10 {
		t.Fatalf("%d windows, want 10", len(got))
	}
	for _, iv := range got {
		for _, s := range iv.Series {
			if s.Key != infos[1].Key {
				t.Fatalf("series %s read, only %s asked for", s.Key, infos[1].Key)
			}
		}
	}
}
