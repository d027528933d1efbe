package tracehist

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// bcc output as people save it (recorded here with bcc 0.26's
// print_log2_hist, see testdata/PROVENANCE.md): two lines of prose, a free-
// text value label "wait time, microsec", "event=NAME" sections after a sed
// rename and HH:MM:SS time lines. Every row is read, in µs, per event.
func TestBCCRecordedWaitHistograms(t *testing.T) {
	text := readTestdata(t, "bcc_wait_hist_recorded.txt")
	day := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	res := runString(t, "bcc", text, source.Options{Date: day, Location: time.UTC})
	if res.Err != nil || len(res.malformed()) > 0 || len(res.Diag.Warnings()) > 0 {
		t.Fatalf("err %v, malformed %q, warnings %q", res.Err, res.malformed(), res.Diag.Warnings())
	}
	if len(res.Intervals) != 3 {
		t.Fatalf("%d intervals, want 3 prints", len(res.Intervals))
	}
	for i, iv := range res.Intervals {
		if want := time.Date(2026, 11, 25, 20, 48, 17+2*i, 0, time.UTC); iv.Relative || !iv.Start.Equal(want) || iv.Duration != 2*time.Second {
			t.Errorf("interval %d: %s +%s relative=%v, want %s +2s", i, iv.Start, iv.Duration, iv.Relative, want)
		}
	}
	want := map[string]float64{"pread64": 42773, "pwrite64": 1852, "fdatasync": 409, "clock_nanosleep": 816}
	for event, n := range want {
		got := 0.0
		for _, h := range res.series(stream.Key{Event: event}) {
			if h.Unit != hist.Microsecond {
				t.Errorf("%s: unit %s", event, h.Unit)
			}
			got += h.Count()
		}
		if got != n {
			t.Errorf("%s: %g events, want %g", event, got, n)
		}
	}
	if raw, got := sumColumn(arrowRowRE, text), res.total(); raw != got || got != 45850 {
		t.Errorf("total %g, rows in the text %g, want 45850", got, raw)
	}
}

// SYNTHETIC: every form of section line names its table: "event=NAME"
// (sed), bcc's "event = 'NAME'", a bare name, "event# = N".
func TestBCCSectionForms(t *testing.T) {
	res := runString(t, "bcc", readTestdata(t, "bcc_oracle_wait_SYNTHETIC.txt"), source.Options{Date: time.Date(2024, 3, 14, 0, 0, 0, 0, time.UTC)})
	if res.Err != nil || len(res.malformed()) > 0 || len(res.Intervals) != 2 {
		t.Fatalf("err %v, malformed %q, %d intervals", res.Err, res.malformed(), len(res.Intervals))
	}
	var got []string
	for _, iv := range res.Intervals {
		for _, s := range iv.Series {
			got = append(got, fmt.Sprintf("%s=%g", s.Key.Event, s.Hist.Count()))
		}
	}
	want := "db file sequential read=754 log file sync=81 direct path read=13 db file sequential read=809 146=7"
	if strings.Join(got, " ") != want {
		t.Errorf("series %q, want %q", strings.Join(got, " "), want)
	}
}

// What may stand before a header as its section line, and what may not:
// the tools' prose, prompts and sentences are no names.
func TestSectionName(t *testing.T) {
	for line, want := range map[string]string{
		"disk = 'sda'":                  "sda",
		"Bucket disk = 'xvdb'":          "xvdb",
		"Function = is_prime [6556]":    "is_prime [6556]",
		"comm = b'postgres'":            "postgres",
		"event=db file sequential read": "db file sequential read",
		"event = 'log file sync'":       "log file sync",
		"event# = 146":                  "146",
		"db file sequential read":       "db file sequential read",
		"enq: TX - row lock contention": "enq: TX - row lock contention",
		"sda":                           "sda",
		"^C":                            "",
		"Tracing 1 function for \"pthread:pthread_mutex_lock\"... Hit Ctrl-C to end.": "",
		"Tracing block device I/O... Hit Ctrl-C to end.":                              "",
		"# ./biolatency -D":              "",
		"$ sudo ./ora_wait_histogram.py": "",
		"For example:":                   "",
		"This is a sentence that ends.":  "",
		"event=":                         "",
		"= value":                        "",
		"one two three four five six seven eight nine": "",
		"a |bar|": "",
	} {
		got, ok := sectionName(line)
		if ok != (want != "") || got != want && ok {
			t.Errorf("sectionName(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
}

// bccTable is a one-row bcc table under a value label.
func bccTable(label string) string {
	return "     " + label + " : count     distribution\n         4 -> 7          : 3        |****|\n\n"
}

// SYNTHETIC: the unit comes from any word of the value label; a label
// naming a size is no latency; a label naming no unit is read in --unit,
// else skipped with a warning naming its line.
func TestBCCValueLabels(t *testing.T) {
	for _, tc := range []struct {
		label string
		unit  hist.Unit // 0: skipped
	}{
		{"usecs", hist.Microsecond},
		{"wait time, microsec", hist.Microsecond},
		{"latency (microseconds)", hist.Microsecond},
		{"µs", hist.Microsecond},
		{"nsecs", hist.Nanosecond},
		{"nsec", hist.Nanosecond},
		{"time, ns", hist.Nanosecond},
		{"msecs", hist.Millisecond},
		{"ms", hist.Millisecond},
		{"wait time, millisec", hist.Millisecond},
		{"secs", hist.Second},
		{"Kbytes", 0},
		{"value", 0},
		{"wait time", 0},
	} {
		res := runString(t, "bcc", "Tracing... Hit Ctrl-C to end.\n\n"+bccTable(tc.label), source.Options{})
		if tc.unit != 0 {
			if res.Err != nil || len(res.Intervals) != 1 || len(res.Intervals[0].Series) != 1 {
				t.Errorf("%q: err %v, intervals %+v", tc.label, res.Err, res.Intervals)
				continue
			}
			if h := res.Intervals[0].Series[0].Hist; h.Unit != tc.unit || h.Count() != 3 {
				t.Errorf("%q: unit %s count %g, want %s", tc.label, h.Unit, h.Count(), tc.unit)
			}
			continue
		}
		w := strings.Join(res.Diag.Warnings(), "\n")
		if !errors.Is(res.Err, input.ErrNothingRead) || !strings.Contains(res.Err.Error(), "synthetic.txt:3: ") ||
			!strings.Contains(w, "line 3: ") || !strings.Contains(w, tc.label) {
			t.Errorf("%q: err %v, warnings %q; want nothing read, line 3 named", tc.label, res.Err, w)
		}
	}
	// --unit reads a label without a unit, never a size.
	res := runString(t, "bcc", bccTable("value")+"kind = sizes\n"+bccTable("Kbytes"), source.Options{Unit: hist.Millisecond})
	if res.Err != nil || len(res.Intervals) != 1 || len(res.Intervals[0].Series) != 1 || res.Intervals[0].Series[0].Hist.Unit != hist.Millisecond {
		t.Errorf("--unit ms: err %v, intervals %+v", res.Err, res.Intervals)
	}
}

// A forced format that reads nothing fails and names the lines it could
// not use, with their count, for every tracer's format; partial input
// keeps what it read and counts the bad rows.
func TestForcedFormatReadsNothing(t *testing.T) {
	prose := "Tracing... Hit Ctrl-C to end.\nsomething else\n\n^C\nDetaching...\n"
	for _, f := range Formats() {
		res := runString(t, f.Name, prose, source.Options{})
		if !errors.Is(res.Err, input.ErrNothingRead) {
			t.Errorf("%s: err %v, want nothing read", f.Name, res.Err)
			continue
		}
		msg := res.Err.Error()
		for _, want := range []string{"synthetic.txt: nothing read as " + f.Name, "4 line(s) could not be used",
			`synthetic.txt:1: "Tracing... Hit Ctrl-C to end."`, "synthetic.txt:2: ", "synthetic.txt:4: ", "and 1 more", "a " + f.Name + " table starts with a line"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", f.Name, msg, want)
			}
		}
	}
	// A header whose rows are all malformed reads nothing either.
	res := runString(t, "bcc", "     usecs : count distribution\n  4 -> 7 : x |*|\n", source.Options{})
	if !errors.Is(res.Err, input.ErrNothingRead) || !strings.Contains(res.Err.Error(), "synthetic.txt:2: row count") || len(res.malformed()) != 1 {
		t.Errorf("malformed rows only: err %v, malformed %q", res.Err, res.malformed())
	}
	// Partial: the good table is kept, the bad row counted, no error.
	res = runString(t, "bcc", prose+"     usecs : count distribution\n  4 -> 7 : 3 |*|\n  8 -> 15 : x |*|\n", source.Options{})
	if res.Err != nil || res.total() != 3 || res.Diag.Count("synthetic.txt") != 1 {
		t.Errorf("partial: err %v, total %g, malformed %q", res.Err, res.total(), res.malformed())
	}
	// Tables filtered out by --event were read: no error.
	res = runString(t, "bcc", "disk = 'sda'\n     usecs : count distribution\n  4 -> 7 : 3 |*|\n", source.Options{Events: []string{"sdb"}})
	if res.Err != nil || res.total() != 0 {
		t.Errorf("--event filtering everything: err %v, total %g", res.Err, res.total())
	}
}
