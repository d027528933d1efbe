package pylatencymap

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/source"
	plmsource "github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

func runFormat(t testing.TB, f source.Format, name string, data []byte, opts source.Options) ([]stream.Interval, *input.Diagnostics) {
	t.Helper()
	diag := input.NewDiagnostics(nil, 100)
	src, err := f.Open(source.Input{Name: name, Reader: bytes.NewReader(data), Diag: diag}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []stream.Interval
	err = src.Run(context.Background(), func(iv stream.Interval) error {
		if err := iv.Validate(); err != nil {
			t.Fatalf("%s: invalid interval: %v", name, err)
		}
		out = append(out, iv)
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out, diag
}

// convert writes intervals with the writer; it returns the output and the
// warnings.
func convert(t testing.TB, ivs []stream.Interval) ([]byte, []string) {
	t.Helper()
	var buf bytes.Buffer
	diag := input.NewDiagnostics(nil, 100)
	w, err := Format().New(&buf, sink.Options{Name: "out.txt", Diag: diag})
	if err != nil {
		t.Fatal(err)
	}
	for i, iv := range ivs {
		if err := w.Write(iv); err != nil {
			t.Fatalf("interval %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), diag.Warnings()
}

// readBack reads the writer's output with latscope's own reader, which must
// find nothing malformed and say nothing.
func readBack(t testing.TB, out []byte) []stream.Interval {
	t.Helper()
	if v := plmsource.Detect(out); v != input.Yes && len(out) > 0 {
		t.Fatalf("latscope's reader does not detect the output (%v)", v)
	}
	ivs, diag := runFormat(t, plmsource.Format(), "out.txt", out, source.Options{})
	if p := diag.Problems(); len(p) > 0 {
		t.Fatalf("reader found malformed lines: %+v", p[0].First)
	}
	if w := diag.Warnings(); len(w) > 0 {
		t.Fatalf("reader warned: %q", w)
	}
	return ivs
}

// countWarnings returns how many warnings contain s.
func countWarnings(warnings []string, s string) int {
	n := 0
	for _, w := range warnings {
		if strings.Contains(w, s) {
			n++
		}
	}
	return n
}

// textRecord is a record of the output, parsed independently of latscope's
// reader: by splitting lines on ", ".
type textRecord struct {
	usec                    int64
	date, label, unit, data string
	rows                    map[uint64]uint64 // N → cumulative count
	order                   []uint64
}

func (r textRecord) total() uint64 {
	var n uint64
	for _, c := range r.rows {
		n += c
	}
	return n
}

func parseRecords(t testing.TB, out []byte) []textRecord {
	t.Helper()
	var recs []textRecord
	var cur *textRecord
	sc := bufio.NewScanner(bytes.NewReader(out))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fields := strings.SplitN(line, ", ", 4)
		switch {
		case line == "<begin record>":
			if cur != nil {
				t.Fatalf("line %d: record not closed", n)
			}
			cur = &textRecord{rows: map[uint64]uint64{}}
		case line == "<end record>":
			recs = append(recs, *cur)
			cur = nil
		case cur == nil:
			t.Fatalf("line %d: text outside records: %q", n, line)
		case fields[0] == "timestamp":
			if len(fields) != 4 || fields[1] != "microsec" {
				t.Fatalf("line %d: %q", n, line)
			}
			cur.usec = mustInt(t, fields[2])
			cur.date = fields[3]
		case fields[0] == "label":
			cur.label = strings.TrimPrefix(line, "label, ")
		case fields[0] == "latencyunit":
			cur.unit = fields[1]
		case fields[0] == "datasource":
			cur.data = fields[1]
		default:
			if len(fields) != 2 {
				t.Fatalf("line %d: %q", n, line)
			}
			v, c := uint64(mustInt(t, fields[0])), uint64(mustInt(t, fields[1]))
			if v&(v-1) != 0 {
				t.Fatalf("line %d: %d is not a power of two", n, v)
			}
			if _, dup := cur.rows[v]; dup {
				t.Fatalf("line %d: bucket %d twice", n, v)
			}
			cur.rows[v] = c
			cur.order = append(cur.order, v)
		}
	}
	if cur != nil {
		t.Fatal("last record not closed")
	}
	return recs
}

func mustInt(t testing.TB, s string) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		u, uerr := strconv.ParseUint(s, 10, 64)
		if uerr != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return int64(u)
	}
	return v
}

// powerOfTwo returns the interval's histograms of event, summed on the
// scale-0 grid of unit (the buckets PyLatencyMap records hold).
func powerOfTwo(iv stream.Interval, event string, unit hist.Unit) *hist.Histogram {
	sum := hist.NewBuckets(unit)
	for _, s := range iv.Series {
		if s.Key.Event == event {
			sum.Merge(hist.Rebin(s.Hist, unit, 0))
		}
	}
	return sum
}

// sameBuckets compares bucket edges and counts (not the capped flag, which
// the records cannot say).
func sameBuckets(a, b *hist.Histogram) error {
	ab, bb := a.Buckets(), b.Buckets()
	if len(ab) != len(bb) {
		return fmt.Errorf("%d buckets %v, want %d %v", len(bb), bb, len(ab), ab)
	}
	for i := range ab {
		x, y := ab[i], bb[i]
		if x.Lower != y.Lower || x.Count != y.Count || (x.Upper != y.Upper && !x.Capped) {
			return fmt.Errorf("bucket %d: [%g, %g) %g, want [%g, %g) %g", i, y.Lower, y.Upper, y.Count, x.Lower, x.Upper, x.Count)
		}
	}
	return nil
}

// compareIntervals checks the read-back intervals against the originals:
// same windows to the µs, same power-of-two counts of event. Gaps read back
// as windows without events.
func compareIntervals(t *testing.T, want, got []stream.Interval, event string, unit hist.Unit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d intervals read back, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		ws, gs := w.Start.Round(time.Microsecond), g.Start
		if !ws.Equal(gs) || w.Relative != g.Relative {
			t.Fatalf("interval %d starts %s (relative %v), want %s (%v)", i, gs, g.Relative, ws, w.Relative)
		}
		if we := w.End().Round(time.Microsecond); !we.Equal(g.End()) {
			t.Fatalf("interval %d ends %s, want %s", i, g.End(), we)
		}
		if _, off := gs.Zone(); !w.Relative {
			if _, woff := ws.Zone(); off != woff {
				t.Fatalf("interval %d: zone offset %d, want %d", i, off, woff)
			}
		}
		if g.Gap {
			t.Fatalf("interval %d reads back as a gap", i)
		}
		if len(g.Series) > 1 {
			t.Fatalf("interval %d: %d series", i, len(g.Series))
		}
		expect := powerOfTwo(w, event, unit)
		have := hist.NewBuckets(unit)
		if len(g.Series) == 1 {
			if g.Series[0].Key != (stream.Key{Event: event}) {
				t.Fatalf("interval %d: key %+v", i, g.Series[0].Key)
			}
			have = g.Series[0].Hist
		}
		if err := sameBuckets(expect, have); err != nil {
			t.Fatalf("interval %d (%s): %v", i, ws, err)
		}
	}
}
