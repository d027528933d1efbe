package oracle10046

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// fuzzSeeds are real trace snippets: each file's start and the places where
// the parser's state changes (timestamps, trcsess sections, SQL text, parse
// errors, continuation markers).
func fuzzSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, rel := range allTraces(t) {
		data := readShared(t, rel)
		seeds = append(seeds, data[:min(len(data), 3000)])
		for _, marker := range []string{"\n*** 20", "\n*** [ Unix", "\nPARSE ERROR", "\n*** TRACE CONTINUE", "\nWAIT #0", "\nBINDS #"} {
			if i := bytes.Index(data, []byte(marker)); i >= 0 {
				seeds = append(seeds, data[i+1:min(len(data), i+1500)])
			}
		}
	}
	return append(seeds,
		[]byte("WAIT #1: nam='x' ela= 1 tim=5\nWAIT #1: nam='x' ela= 1 tim=1\n"),
		[]byte("*** 2023-04-17T20:30:29.5+00:00\nWAIT #1: nam='a' b' ela=3 p=1 tim=99999999999999\n"),
		[]byte("PARSING IN CURSOR #1 len=1 tim=1\nselect\n"),
	)
}

// FuzzParse feeds arbitrary bytes through the parser: it must never panic
// or fail, every interval must be valid and of one clock kind, and no more
// waits may come out than the input has WAIT lines.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s, uint16(3000))
		f.Add(s, uint16(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, intervalMs uint16) {
		opts := source.Options{Interval: time.Duration(intervalMs) * time.Millisecond, Location: time.UTC}
		src, _ := Open(source.Input{Name: "fuzz", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 0)}, opts)
		var waits float64
		var kind []bool
		err := src.Run(context.Background(), func(iv stream.Interval) error {
			if err := iv.Validate(); err != nil {
				t.Fatalf("invalid interval: %v", err)
			}
			if len(kind) > 0 && kind[0] != iv.Relative {
				t.Fatalf("relative and wall-clock intervals mixed")
			}
			kind = append(kind[:0], iv.Relative)
			for _, s := range iv.Series {
				if s.Key.Event == "" {
					t.Fatalf("series without an event name")
				}
				waits += s.Hist.Count()
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		lines := bytes.Count(data, []byte("\nWAIT #"))
		if bytes.HasPrefix(bytes.TrimPrefix(data, utf8BOM), waitPrefix) {
			lines++
		}
		if waits > float64(lines) {
			t.Fatalf("%g waits out of %d WAIT lines", waits, lines)
		}
	})
}
