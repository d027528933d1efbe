package api

import (
	"net/url"
	"testing"
	"time"

	"github.com/latscope/latscope/archive"
)

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 25, 4, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                     {},
		"now":                  now,
		"-1h":                  now.Add(-time.Hour),
		"-7d":                  now.Add(-7 * 24 * time.Hour),
		"2026-11-25T03:10:00Z": time.Date(2026, 11, 25, 3, 10, 0, 0, time.UTC),
		"2026-11-25 03:10":     time.Date(2026, 11, 25, 3, 10, 0, 0, time.UTC),
	} {
		got, err := ParseTime(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"yesterday", "-1x", "2026-13-25"} {
		if _, err := ParseTime(bad, now); err == nil {
			t.Errorf("ParseTime(%q) accepted", bad)
		}
	}
}

func TestParseResolution(t *testing.T) {
	tiers := archive.DefaultTiers()
	for in, want := range map[string]time.Duration{"": archive.Auto, "auto": archive.Auto, "raw": archive.Raw, "1m": time.Minute} {
		if got, err := ParseResolution(in, tiers); err != nil || got != want {
			t.Errorf("ParseResolution(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"7m", "0s", "-1m", "fast"} {
		if _, err := ParseResolution(bad, tiers); err == nil {
			t.Errorf("ParseResolution(%q) accepted", bad)
		}
	}
}

func TestGlobLiteral(t *testing.T) {
	if got := globLiteral(`a*b?[c]\d`); got != `a\*b\?\[c\]\\d` {
		t.Errorf("globLiteral = %q", got)
	}
	if err := archive.CheckPattern(globLiteral("db file [x*")); err != nil {
		t.Errorf("an escaped name is not a valid pattern: %v", err)
	}
}

func FuzzParams(f *testing.F) {
	for _, s := range []string{"", "now", "-1h", "2026-11-25T03:10:00Z", "raw", "1m", "auto", "-9223372036854775807ns", "600", "4001", "0x10", "+7"} {
		f.Add(s)
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, s string) {
		ParseTime(s, now)
		if d, err := ParseResolution(s, archive.DefaultTiers()); err == nil && d != archive.Auto && d != archive.Raw && d != time.Minute {
			t.Fatalf("%q: resolution %v of no tier", s, d)
		}
		if err := archive.CheckPattern(globLiteral(s)); err != nil {
			t.Fatalf("%q: escaped pattern refused: %v", s, err)
		}
		if n, err := intParam(url.Values{"columns": {s}}, "columns", DefaultHeatmapColumns, 1, MaxHeatmapColumns); err == nil && (n < 1 || n > MaxHeatmapColumns) {
			t.Fatalf("%q: %d columns accepted", s, n)
		}
	})
}
