package oracle10046

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// Timestamps as the trace versions write them, and damaged ones.
func TestParseStamp(t *testing.T) {
	loc := time.FixedZone("TZ", 3600)
	var p parser
	good := map[string]string{
		"2008-02-29 07:43:11.461":                          "2008-02-29T07:43:11.461+01:00",
		"2023-04-17T20:30:29.555939+00:00 (FREEPDB1(3))":   "2023-04-17T20:30:29.555939Z",
		"2019-07-09T09:57:07.703508-07:00":                 "2019-07-09T09:57:07.703508-07:00",
		"2023-05-19T05:28:00.339263 (TESTPDB(11))":         "2023-05-19T05:28:00.339263+01:00",
		"2024-03-14T17:38:01.234321-0700":                  "2024-03-14T17:38:01.234321-07:00",
		"2024-03-14T17:38:01Z":                             "2024-03-14T17:38:01Z",
		"2024-03-14 17:38:01":                              "2024-03-14T17:38:01+01:00",
		"2024-03-14T17:38:01.1234567891+05:30 (X)":         "2024-03-14T17:38:01.123456789+05:30",
		"2007-07-11 10:58:57.903\t":                        "2007-07-11T10:58:57.903+01:00",
		"2026-01-15T06:03:13.715237+01:00 (OPRD23(7))":     "2026-01-15T06:03:13.715237+01:00",
		"2023-04-17T20:30:29.505411+00:00 trailing words ": "2023-04-17T20:30:29.505411Z",
	}
	for in, want := range good {
		got, ok := parseStamp([]byte(in), loc, p.zone)
		if !ok || got.Format(time.RFC3339Nano) != want {
			t.Errorf("parseStamp(%q) = %s, %v; want %s", in, got.Format(time.RFC3339Nano), ok, want)
		}
	}
	for _, in := range []string{"", "TRACE CONTINUED", "2023-02-30 00:00:00", "2023-13-01 00:00:00",
		"2023-01-01 24:00:00", "2023-01-01 00:00:00.", "2023-01-01 00:00:00+25:00", "2023-01-01T00:00:00xyz",
		"2023-01-01T00:00:00+01", "2023/01/01 00:00:00", "2023-01-01 0:00:00.000", "0001-01-01 00:00:00"} {
		if got, ok := parseStamp([]byte(in), loc, p.zone); ok {
			t.Errorf("parseStamp(%q) = %s, want failure", in, got)
		}
	}
}

// A trace with more waits than can be held before any timestamp is read on
// relative time, even if timestamps come later; relative runs (the copies
// going back in time) are laid end to end.
func TestHeldWaitsLimitSwitchesToRelativeTime(t *testing.T) {
	// The 19.x trace has a WAIT line every 320 bytes (100 000 waits take
	// 32 MB) and spans 85 minutes, so each copy goes back in time.
	data := readShared(t, fileTwoStmts)
	noStamps := dropLines(data, func(_ int, line string) bool { return strings.HasPrefix(line, "*** ") })
	copies := maxHeld/waitsTwoStmts + 2
	r := &repeatReader{data: noStamps, n: copies}
	res := runReader(t, "many", &concatReader{r, strings.NewReader(string(data))}, source.Options{})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	want := fmt.Sprintf("many: no timestamp line before the first %d waits: times are relative to the first wait", maxHeld)
	if w := res.Diag.Warnings(); len(w) != 2 || w[0] != want || !strings.Contains(w[1], "time goes backwards") {
		t.Errorf("warnings %q, want [%q, time goes backwards...]", w, want)
	}
	var waits float64
	for i, iv := range res.Intervals {
		if !iv.Relative {
			t.Fatalf("interval %d at %s is not relative", i, iv.Start)
		}
		if i > 0 && iv.Start.Before(res.Intervals[i-1].End()) {
			t.Fatalf("relative interval %d starts %s before the previous end %s", i, iv.Start, res.Intervals[i-1].End())
		}
		for _, s := range iv.Series {
			waits += s.Hist.Count()
		}
	}
	if want := float64(waitsTwoStmts * (copies + 1)); waits != want {
		t.Errorf("%g waits, want %g", waits, want)
	}
	if !res.Intervals[0].Start.Equal(stream.RelativeStart) {
		t.Errorf("first interval at %s, want %s", res.Intervals[0].Start, stream.RelativeStart)
	}
}

// concatReader reads one reader after another (io.MultiReader, but keeping
// the repeatReader's short reads).
type concatReader struct {
	a, b interface{ Read([]byte) (int, error) }
}

func (c *concatReader) Read(p []byte) (int, error) {
	if c.a != nil {
		n, err := c.a.Read(p)
		if err == nil || n > 0 {
			return n, nil
		}
		c.a = nil
	}
	return c.b.Read(p)
}

// In a trcsess merge each process keeps its own anchor: with process
// 9854's clock an hour ahead and the timestamps that open its later sections
// removed, its waits still land an hour later, as in its own file. (The
// hour-long quiet stretches this artificial merge produces are left out.)
func TestTrcsessSectionsKeepTheirOwnAnchor(t *testing.T) {
	shift := func(line string) string { return strings.Replace(line, "T09:57:", "T10:57:", 1) }
	var edited []string
	pid, seen, afterPID := "", map[string]bool{}, false
	for _, line := range strings.SplitAfter(string(readShared(t, fileTrcsess)), "\n") {
		switch {
		case strings.HasPrefix(line, "*** [ Unix process pid: "):
			pid = strings.Trim(strings.TrimPrefix(line, "*** [ Unix process pid: "), " ]\n")
			afterPID = seen[pid]
			seen[pid] = true
		case strings.HasPrefix(line, "*** 20") && afterPID:
			continue // the section starts without a timestamp
		case strings.HasPrefix(line, "*** ") && pid == "9854":
			line = shift(line)
			afterPID = false
		default:
			afterPID = false
		}
		edited = append(edited, line)
	}
	var shifted []string
	for _, line := range strings.SplitAfter(string(readShared(t, file9854)), "\n") {
		if strings.HasPrefix(line, "*** ") {
			line = shift(line)
		}
		shifted = append(shifted, line)
	}
	res := run(t, "merged", []byte(strings.Join(edited, "")), source.Options{Interval: time.Second})
	a := run(t, "9850", readShared(t, file9850), source.Options{Interval: time.Second})
	b := run(t, "9854", []byte(strings.Join(shifted, "")), source.Options{Interval: time.Second})
	want := byWindow(withEvents(append(append([]stream.Interval{}, a.Intervals...), b.Intervals...)))
	if got := byWindow(withEvents(res.Intervals)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("windows:\n%s\nwant those of the two files:\n%s%s", describe(res.Intervals), describe(a.Intervals), describe(b.Intervals))
	}
}

// withEvents drops the intervals without series.
func withEvents(ivs []stream.Interval) []stream.Interval {
	var out []stream.Interval
	for _, iv := range ivs {
		if len(iv.Series) > 0 {
			out = append(out, iv)
		}
	}
	return out
}
