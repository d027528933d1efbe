package source

import (
	"fmt"
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
