package recording

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// opener opens recordings as latscope does: source/lsr registers the same
// format (it cannot be imported here, it imports this package).
func opener(opts source.Options, diag *input.Diagnostics) *source.Opener {
	format := source.Format{Name: FormatName, Detect: Detect,
		Open: func(in source.Input, opts source.Options) (source.Source, error) {
			return OpenReplay(in.Name, in.Reader, in.Diag, ReplayOptions{Events: opts.Events, Follow: opts.Follow})
		}}
	return &source.Opener{Formats: []source.Format{format}, Options: opts, Diag: diag}
}

func runAll(t *testing.T, src source.Source) []stream.Interval {
	t.Helper()
	var got []stream.Interval
	err := src.Run(context.Background(), func(iv stream.Interval) error {
		got = append(got, iv)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestDetect(t *testing.T) {
	cases := map[string]input.Verdict{
		"":                      input.NeedMore,
		"\x89LS":                input.NeedMore,
		Magic:                   input.Yes,
		Magic + "\x01\x00":      input.Yes,
		"<begin record>\n":      input.No,
		"\x89PNG\r\n\x1a\n":     input.No,
		"WAIT #1: nam='x' ela=": input.No,
	}
	for prefix, want := range cases {
		if got := Detect([]byte(prefix)); got != want {
			t.Errorf("detect(%q) = %v, want %v", prefix, got, want)
		}
	}
}

func TestOpenerDetectsFilesAndGzip(t *testing.T) {
	ivs := exampleIntervals(t, true)
	data := encode(t, ivs)
	dir := t.TempDir()
	plain := filepath.Join(dir, "example"+Extension)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(data)
	zw.Close()
	gz := filepath.Join(dir, "example.lsr.gz")
	for path, content := range map[string][]byte{plain: data, gz: zipped.Bytes()} {
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		diag := input.NewDiagnostics(nil, 5)
		src, err := opener(source.Options{}, diag).Open(context.Background(), path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if src.Name() != path {
			t.Errorf("source named %q, want %q", src.Name(), path)
		}
		if err := diffIntervals(ivs, runAll(t, src)); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if n := diag.Count(path); n != 0 {
			t.Errorf("%s: %d problems", path, n)
		}
	}
}

func TestOpenerRefusesNewerMajorVersion(t *testing.T) {
	data := binary.AppendUvarint([]byte(Magic), 3)
	data = binary.AppendUvarint(data, 1)
	path := filepath.Join(t.TempDir(), "future.lsr")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := opener(source.Options{}, nil).Open(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "future.lsr: recording format version 3.1 is newer than this latscope reads (1.x): upgrade latscope") {
		t.Errorf("error %v", err)
	}
}

func TestOpenerReadsAPipe(t *testing.T) {
	ivs := exampleIntervals(t, false)
	data := encode(t, ivs)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		defer w.Close()
		// Dribble: detection must wait for the magic, frames for their rest.
		for len(data) > 0 {
			n := min(len(data), 5)
			if _, err := w.Write(data[:n]); err != nil {
				return
			}
			data = data[n:]
			if len(data) > len(Magic) && len(data) < 2*len(Magic) {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	op := opener(source.Options{}, input.NewDiagnostics(nil, 5))
	op.Stdin = r
	src, err := op.Open(context.Background(), "-")
	if err != nil {
		t.Fatal(err)
	}
	if err := diffIntervals(ivs, runAll(t, src)); err != nil {
		t.Fatal(err)
	}
}

func TestFollowReceivesEachIntervalAsWritten(t *testing.T) {
	ivs := exampleIntervals(t, true)[:4]
	path := filepath.Join(t.TempDir(), "live.lsr")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	// The writer stages its bytes so the test can also deliver a frame in
	// two halves, as a writer caught mid-write would.
	var staged bytes.Buffer
	w, err := NewWriter(&staged)
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(b []byte) {
		if _, err := file.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	deliver(staged.Bytes())
	staged.Reset()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	diag := input.NewDiagnostics(nil, 5)
	src, err := opener(source.Options{Follow: true}, diag).Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	received := make(chan stream.Interval)
	done := make(chan error, 1)
	go func() {
		done <- src.Run(ctx, func(iv stream.Interval) error {
			select {
			case received <- iv:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	for i, iv := range ivs {
		if err := w.Write(iv); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		frames := staged.Bytes()
		if i == 2 {
			half := len(frames) / 2
			deliver(frames[:half])
			select {
			case got := <-received:
				t.Fatalf("interval %d emitted from half a frame: %v", i, got.Start)
			case <-time.After(600 * time.Millisecond):
			}
			if n := diag.Count(path); n != 0 {
				t.Fatalf("a frame still being written was reported as damage")
			}
			frames = frames[half:]
		}
		deliver(frames)
		staged.Reset()
		select {
		case got := <-received:
			if err := diffInterval(iv, got); err != nil {
				t.Fatalf("interval %d: %v", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("interval %d not received while following", i)
		}
	}
	// Stop following in the middle of a frame: not damage either.
	_ = w.Write(ivs[0])
	_ = w.Flush()
	deliver(staged.Bytes()[:5])
	time.Sleep(300 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop when the context ended")
	}
	if n := diag.Count(path); n != 0 {
		t.Errorf("%d problems reported while following: %v", n, diag.Problems()[0].First)
	}
}

// TestReplayGivesTheSameSeries runs a recording through source.RunAll into
// a stream.Recording, as latscope commands do, and compares every series
// with what the original intervals give.
func TestReplayGivesTheSameSeries(t *testing.T) {
	orig := append(exampleIntervals(t, true),
		traceIntervals(t, realTrace, 100*time.Millisecond)...)
	path := filepath.Join(t.TempDir(), "both.lsr")
	if err := os.WriteFile(path, encode(t, orig), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, byFile := range []bool{false, true} {
		var want, got stream.Recording
		for _, iv := range orig {
			if byFile {
				iv.Series = append([]stream.SeriesHist(nil), iv.Series...)
				for j := range iv.Series {
					iv.Series[j].Key.Source = iv.Source
				}
			}
			want.Add(iv)
		}
		diag := input.NewDiagnostics(nil, 5)
		src, err := opener(source.Options{}, diag).Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		err = source.RunAll(context.Background(), []source.Source{src}, byFile, diag, func(iv stream.Interval) error {
			got.Add(iv)
			return nil
		})
		if err != nil || len(diag.Warnings()) != 0 {
			t.Fatalf("RunAll: %v %v", err, diag.Warnings())
		}
		ws, gs := want.Series(), got.Series()
		if len(ws) != len(gs) || len(ws) < 5 {
			t.Fatalf("%d series, want %d", len(gs), len(ws))
		}
		for i := range ws {
			if ws[i].Key != gs[i].Key || len(ws[i].Points) != len(gs[i].Points) {
				t.Fatalf("series %d: %s with %d points, want %s with %d", i, gs[i].Key, len(gs[i].Points), ws[i].Key, len(ws[i].Points))
			}
			if err := diffHist(ws[i].Total, gs[i].Total); err != nil {
				t.Fatalf("series %s total: %v", ws[i].Key, err)
			}
		}
	}
}
