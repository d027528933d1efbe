package source

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseDateTime(t *testing.T) {
	for s, want := range map[string]string{
		"2024-03-14 07:43:11.461 UTC":   "2024-03-14 07:43:11",
		"2023-04-17T20:30:29.555+00:00": "2023-04-17 20:30:29",
		"2016-12-31 23:59:60":           "2016-12-31 23:59:60", // a leap second
		"2024-02-30 00:00:00":           "2024-02-30 00:00:00", // Time moves it on
		"2024-13-01 00:00:00":           "",
		"2024-01-01 24:00:00":           "",
		"2024-01-01 00:00":              "",
		"2024/01/01 00:00:00":           "",
		"2024-01-01 0a:00:00":           "",
	} {
		d, ok := ParseDateTime(s)
		got := ""
		if ok {
			got = fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", d.Year, d.Month, d.Day, d.Hour, d.Minute, d.Second)
		}
		if got != want {
			t.Errorf("ParseDateTime(%q) = %q, want %q", s, got, want)
		}
	}
	d, _ := ParseDateTime([]byte("2024-02-30 01:02:03"))
	if got := d.Time(5, time.UTC); !got.Equal(time.Date(2024, 3, 1, 1, 2, 3, 5, time.UTC)) {
		t.Errorf("Time = %s", got)
	}
}

// FuzzParseDateTime checks ParseDateTime against time.Parse: what it reads
// prints back as the input's first 19 bytes, and whatever time.Parse reads
// with all its digits in place it reads too (it is laxer only about leap
// seconds and month lengths).
func FuzzParseDateTime(f *testing.F) {
	f.Add("2024-03-14 07:43:11.461 UTC")
	f.Add("2023-04-17T20:30:29+00:00")
	f.Add("2024-02-30 24:00:60")
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := ParseDateTime(s)
		bs, bok := ParseDateTime([]byte(s))
		if ok != bok || d != bs {
			t.Fatalf("string and []byte disagree on %q", s)
		}
		if len(s) < 19 {
			if ok {
				t.Fatalf("read %q", s)
			}
			return
		}
		head := s[:10] + " " + s[11:19]
		if ok {
			if back := fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", d.Year, d.Month, d.Day, d.Hour, d.Minute, d.Second); back != head {
				t.Fatalf("%q read as %s", s, back)
			}
		}
		if _, err := time.Parse(time.DateTime, head); err == nil && !ok && (s[10] == ' ' || s[10] == 'T') && allDigits(head) {
			t.Fatalf("time.Parse reads %q, ParseDateTime does not", head)
		}
	})
}

// allDigits reports whether "YYYY-MM-DD HH:MM:SS" has a digit at each Y M D H M S.
func allDigits(head string) bool {
	for i, c := range []byte(head) {
		if i != 4 && i != 7 && i != 10 && i != 13 && i != 16 && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	zurich := time.FixedZone("CET", 3600)
	for s, want := range map[string]string{
		"now":                       "2026-11-25T12:00:00Z",
		"-24h":                      "2026-11-24T12:00:00Z",
		"-90m":                      "2026-11-25T10:30:00Z",
		"-7d":                       "2026-11-18T12:00:00Z",
		"-1d12h":                    "2026-11-24T00:00:00Z",
		"+5m":                       "2026-11-25T12:05:00Z",
		"2026-11-25T03:10:00Z":      "2026-11-25T03:10:00Z",
		"2026-11-25T03:10:00+01:00": "2026-11-25T02:10:00Z",
		"2026-11-25 03:10:00":       "2026-11-25T02:10:00Z",
		"2026-11-25 03:10":          "2026-11-25T02:10:00Z",
		"2026-11-25":                "2026-11-24T23:00:00Z",
		"yesterday":                 "",
		"-":                         "",
		"-1x":                       "",
		"--1h":                      "",
		"-99999999999d":             "",
	} {
		got, err := ParseWhen(s, now, zurich)
		gotS := ""
		if err == nil {
			gotS = got.UTC().Format(time.RFC3339)
		}
		if gotS != want {
			t.Errorf("ParseWhen(%q) = %q (%v), want %q", s, gotS, err, want)
		}
	}
}

// FuzzParseWhen: any input gives a time or an error naming the input,
// never a panic; relative times land where their duration says.
func FuzzParseWhen(f *testing.F) {
	for _, s := range []string{"now", "-24h", "-7d", "-1d12h", "+5m", "2026-11-25T03:10:00Z", "2026-11-25 03:10", "2026-11-25", "-d", "-1d-1h", "-9223372036854775807ns"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseWhen(s, now, time.UTC)
		if err != nil {
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", s)) {
				t.Fatalf("error %q does not name the input %q", err, s)
			}
			return
		}
		if got.IsZero() && s != "0001-01-01" {
			t.Logf("%q gives the zero time", s)
		}
	})
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"365d": 365 * 24 * time.Hour, "7d12h": 180 * time.Hour, "90m": 90 * time.Minute, "0d": 0} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "d", "-1d", "1d-1h", "forever", "1y", "99999999999d"} {
		if _, err := ParseAge(bad); err == nil {
			t.Errorf("ParseAge(%q) accepted", bad)
		}
	}
}

func FuzzParseAge(f *testing.F) {
	for _, s := range []string{"365d", "7d12h", "90m", "", "d", "1d-1h", "9223372036854775807ns", "106751d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseAge(s)
		if err == nil && d < 0 {
			t.Fatalf("ParseAge(%q) = %v: negative", s, d)
		}
		if err == nil && d > 0 {
			if back, err := ParseAge(FormatAge(d)); err != nil || back != d {
				t.Fatalf("ParseAge(FormatAge(%v)) = %v, %v: FormatAge wrote %q", d, back, err, FormatAge(d))
			}
		}
	})
}

// FormatAge writes what ParseAge reads back, shortest first.
func TestFormatAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		72 * time.Hour: "3d", 36 * time.Hour: "1d12h", 90 * time.Minute: "1h30m", time.Hour: "1h",
		10 * time.Second: "10s", 30 * time.Minute: "30m", 24*time.Hour + 10*time.Second: "1d10s",
		365*24*time.Hour + 90*time.Minute + 1500*time.Millisecond: "365d1h30m1.5s",
	} {
		got := FormatAge(d)
		if got != want {
			t.Errorf("FormatAge(%v) = %q; want %q", d, got, want)
		}
		if back, err := ParseAge(got); err != nil || back != d {
			t.Errorf("ParseAge(FormatAge(%v)) = %v, %v", d, back, err)
		}
	}
}
