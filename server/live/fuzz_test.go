package live_test

import (
	"errors"
	"testing"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/live"
	"github.com/latscope/latscope/stream"
)

// FuzzParseRequest: whatever the series glob, id list and Last-Event-ID,
// parsing answers a filter or an invalid-request error (400), never a
// panic, and a filter answers for any series.
func FuzzParseRequest(f *testing.F) {
	for _, seed := range []struct{ pattern, ids, lastID string }{
		{"", "", ""},
		{"log file*", "1,2", "2026-11-25T03:10:01Z"},
		{"[a-z]?x\\*", "3", "2026-11-25T03:10:01.123456789+02:00"},
		{"[", "0", "yesterday"},
		{"*", "1,,x", "2026-13-01T00:00:00Z"},
	} {
		f.Add(seed.pattern, seed.ids, seed.lastID)
	}
	f.Fuzz(func(t *testing.T, pattern, ids, lastID string) {
		flt, err := live.ParseFilter(pattern, []string{ids})
		if err != nil && !errors.Is(err, auth.ErrInvalid) {
			t.Fatalf("filter error %v is not a 400", err)
		}
		if err == nil {
			_ = live.Wants(flt, archive.SeriesInfo{ID: 1, Source: "db01", Key: stream.Key{Event: pattern}})
		}
		if end, err := live.ParseID(lastID); err != nil && !errors.Is(err, auth.ErrInvalid) {
			t.Fatalf("id error %v is not a 400", err)
		} else if err == nil && live.FormatID(end) == "" {
			t.Fatalf("id %q: no id back", lastID)
		}
	})
}
