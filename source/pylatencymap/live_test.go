package pylatencymap

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// liveRecords are SYNTHETIC records one second apart, each bucket growing.
func liveRecords(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = rec(strconv.Itoa(i+1)+"000000", oracleLabel, ms, oracleDS, "1, "+strconv.Itoa(10*i), "8, "+strconv.Itoa(i))
	}
	return out
}

// waitInterval returns the next emitted interval or fails after a timeout.
func waitInterval(t *testing.T, got <-chan stream.Interval, what string) stream.Interval {
	t.Helper()
	select {
	case iv := <-got:
		return iv
	case <-time.After(5 * time.Second):
		t.Fatalf("no interval emitted after %s: the source waits for more input instead of emitting", what)
	}
	return stream.Interval{}
}

// A pipe fed slowly: each interval must be emitted as soon as its record's
// <end record> is written, before the next record exists.
func TestPipeEmitsEachRecordLive(t *testing.T) {
	pr, pw := io.Pipe()
	src, err := Open(source.Input{Name: "-", Reader: pr, Diag: input.NewDiagnostics(nil, 5)}, source.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan stream.Interval, 8)
	done := make(chan error, 1)
	go func() {
		done <- src.Run(context.Background(), func(iv stream.Interval) error { got <- iv; return nil })
	}()
	write := func(s string) {
		t.Helper()
		if _, err := io.WriteString(pw, s); err != nil {
			t.Fatal(err)
		}
	}
	records := liveRecords(4)
	write("31 rows selected.\n" + records[0])
	for i, r := range records[1:] {
		// Half a record, a pause, then the rest: a partial line must wait.
		half := len(r) / 2
		write(r[:half])
		select {
		case iv := <-got:
			t.Fatalf("interval %s emitted before its record was complete", iv.Start)
		case <-time.After(20 * time.Millisecond):
		}
		write(r[half:])
		iv := waitInterval(t, got, "record "+strconv.Itoa(i+2))
		if n := eventCount(iv); n != 11 || iv.Duration != time.Second {
			t.Errorf("interval %d: %g events in %s, want 11 in 1s", i, n, iv.Duration)
		}
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// --follow through the core Opener: records appended to a file appear as
// intervals; stopping the run leaves a half-written record unreported.
func TestFollowGrowingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "feed.txt")
	records := liveRecords(3)
	if err := os.WriteFile(path, []byte(records[0]+records[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	diag := input.NewDiagnostics(nil, 5)
	o := &source.Opener{Formats: []source.Format{Format()}, Diag: diag, Options: source.Options{Follow: true}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src, err := o.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan stream.Interval, 8)
	done := make(chan error, 1)
	go func() {
		done <- src.Run(ctx, func(iv stream.Interval) error { got <- iv; return nil })
	}()
	waitInterval(t, got, "the first two records")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(records[2] + "<begin record>\n1, 5\n"); err != nil {
		t.Fatal(err)
	}
	if iv := waitInterval(t, got, "an appended record"); eventCount(iv) != 11 {
		t.Errorf("appended record gave %g events, want 11", eventCount(iv))
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop after cancel")
	}
	if n := diag.Count(path); n != 0 {
		t.Errorf("%d malformed reports after stopping a followed file, want 0", n)
	}
}
