package recording

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// smallRecording mixes real Oracle buckets (two instances, +02:00) and
// real trace waits (relative, exact), interleaving two sources.
func smallRecording(t testing.TB) ([]stream.Interval, []byte) {
	a := exampleIntervals(t, true)[:3]
	b := traceIntervals(t, "trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc", 10*time.Millisecond)[:3]
	ivs := []stream.Interval{a[0], b[0], a[1], b[1], b[2], a[2]}
	return ivs, encode(t, ivs)
}

// replayBytes replays a recording as latscope would, and returns the intervals and the problems reported.
func replayBytes(t testing.TB, data []byte, opts ReplayOptions) ([]stream.Interval, []input.Problem, error) {
	t.Helper()
	diag := input.NewDiagnostics(nil, 10)
	src, err := OpenReplay("rec.lsr", bytes.NewReader(data), diag, opts)
	if err != nil {
		return nil, nil, err
	}
	var got []stream.Interval
	err = src.Run(context.Background(), func(iv stream.Interval) error {
		got = append(got, iv)
		return nil
	})
	var problems []input.Problem
	for _, p := range diag.Problems() {
		problems = append(problems, p.First...)
	}
	return got, problems, err
}

func TestTruncationKeepsCompleteFrames(t *testing.T) {
	ivs, data := smallRecording(t)
	header, ends, isInterval := frameEnds(t, data)
	boundary := map[int]bool{header: true}
	for _, e := range ends {
		boundary[e] = true
	}
	for cut := 0; cut <= len(data); cut++ {
		got, problems, err := replayBytes(t, data[:cut], ReplayOptions{})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		complete := 0
		for i, e := range ends {
			if e <= cut && isInterval[i] {
				complete++
			}
		}
		if err := diffIntervals(ivs[:complete], got); err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		if boundary[cut] {
			if len(problems) != 0 {
				t.Fatalf("cut at frame boundary %d reported %v", cut, problems)
			}
			continue
		}
		if len(problems) != 1 {
			t.Fatalf("cut at %d: %d problems reported, want 1", cut, len(problems))
		}
		frameStart := header
		if i := sort.SearchInts(ends, cut); i > 0 && cut > header {
			frameStart = ends[i-1]
		}
		if cut < header {
			frameStart = 0
		}
		want := fmt.Sprintf("rec.lsr: byte offset %d: ", frameStart)
		if p := problems[0].String(); !strings.HasPrefix(p, want) || !strings.Contains(p, "cut short") {
			t.Fatalf("cut at %d: reported %q, want %q... cut short", cut, p, want)
		}
	}
}

func TestBitFlipsAreCaught(t *testing.T) {
	ivs, data := smallRecording(t)
	header, ends, isInterval := frameEnds(t, data)
	damaged := make([]byte, len(data))
	for pos := header; pos < len(data); pos++ {
		frame := sort.SearchInts(ends, pos+1) // the frame holding pos
		frameStart, before := header, 0
		if frame > 0 {
			frameStart = ends[frame-1]
		}
		for i := range frame {
			if isInterval[i] {
				before++
			}
		}
		for bit := range 8 {
			copy(damaged, data)
			damaged[pos] ^= 1 << bit
			got, problems, err := replayBytes(t, damaged, ReplayOptions{})
			if err != nil {
				t.Fatalf("flip %d.%d: %v", pos, bit, err)
			}
			if err := diffIntervals(ivs[:before], got); err != nil {
				t.Fatalf("flip %d.%d: %v", pos, bit, err)
			}
			want := fmt.Sprintf("rec.lsr: byte offset %d: ", frameStart)
			if len(problems) != 1 || !strings.HasPrefix(problems[0].String(), want) {
				t.Fatalf("flip %d.%d: problems %v, want one at %s", pos, bit, problems, want)
			}
		}
	}
}

func TestCRCValidGarbageIsDamage(t *testing.T) {
	_, data := smallRecording(t)
	header, _, _ := frameEnds(t, data)
	src := rawFrame(frameSource, []byte{0, 1, 'x'})
	cases := []struct {
		frames []byte
		reason string
	}{
		{rawFrame(frameInterval, []byte{9, 0}), "undefined source id 9"},
		{rawFrame(frameSource, []byte{5, 1, 'x'}), "id 5 out of sequence"},
		{rawFrame(frameSeries, []byte{0, 0, 0, 0, 7, 0, 0}), "unknown unit: 7"},
		{rawFrame(frameSource, []byte{0, 100, 'x'}), "exceeds the 1 bytes left"},
		{rawFrame(frameReserved, nil), "unknown frame type 0x53"},
		{append(src, rawFrame(frameInterval, []byte{0, 0x80, 0, 0, 2, 0})...), "unknown interval flags 0x80"},
		{append(src, rawFrame(frameInterval, []byte{0, 0, 0, 2, 0})...), "start delta without a previous interval"},
		{append(src, rawFrame(frameInterval, []byte{0, ivAbsStart, 0, 0, 0, 0})...), "no positive duration"},
		{append(src, rawFrame(frameInterval, []byte{0, ivAbsStart, 2, 0, 2, 1, 0, 0})...), "undefined series id 0"},
		{append(src, 0x89, 'L', 'S'), "recording header cut short"},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}, "bad frame length"},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x01}, "exceeds the limit"},
	}
	for i, c := range cases {
		in := append(append([]byte{}, data[:header]...), c.frames...)
		got, problems, err := replayBytes(t, in, ReplayOptions{})
		if err != nil || len(got) != 0 || len(problems) != 1 || !strings.Contains(problems[0].Reason, c.reason) {
			t.Errorf("case %d: %d intervals, problems %v, err %v; want %q", i, len(got), problems, err, c.reason)
		}
	}
}

func TestEventsFilterKeepsWindows(t *testing.T) {
	ivs := traceIntervals(t, realTrace, 100*time.Millisecond)
	got, problems, err := replayBytes(t, encode(t, ivs), ReplayOptions{Events: []string{"db file sequential read"}})
	if err != nil || len(problems) != 0 {
		t.Fatalf("%v %v", err, problems)
	}
	if len(got) != len(ivs) {
		t.Fatalf("%d intervals, want all %d windows", len(got), len(ivs))
	}
	kept, all := 0.0, 0.0
	for i := range got {
		for _, s := range got[i].Series {
			if s.Key.Event != "db file sequential read" {
				t.Fatalf("interval %d kept %s", i, s.Key)
			}
			kept += s.Hist.Count()
		}
		for _, s := range ivs[i].Series {
			if s.Key.Event == "db file sequential read" {
				all += s.Hist.Count()
			}
		}
	}
	if kept != all || kept == 0 {
		t.Errorf("kept %g reads, the trace has %g", kept, all)
	}
}
