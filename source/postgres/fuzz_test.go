package postgres

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// FuzzLog feeds arbitrary input to Detect and the parser: no panic,
// valid histograms, intervals in order, and "all statements" holding
// exactly the events of the per-statement series.
func FuzzLog(f *testing.F) {
	for _, p := range realSamples {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b[:min(len(b), 4096)]))
	}
	f.Add("2026-11-22 04:53:00.100 UTC [1] LOG:  duration: 1.5 ms  statement: select 'a\n\tb', -1\n\tx\n1795323180.440 [1] LOG:  duration: 2 ms  execute S_1: select $1\n")
	f.Add("2026-11-22 04:53:00.100 UTC,,,1,,a.b,1,,x,,0,LOG,00000,\"duration: 1.000 ms  statement: select \"\"x\"\"\n1\",,,,,,,,,\"\",\"client backend\",,0\n")
	f.Fuzz(func(t *testing.T, in string) {
		Detect([]byte(in))
		diag := input.NewDiagnostics(nil, 0)
		src, err := Open(source.Input{Name: "fuzz", Reader: strings.NewReader(in), Diag: diag}, source.Options{Interval: 250 * time.Millisecond, Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		var last time.Time
		err = src.Run(context.Background(), func(iv stream.Interval) error {
			if !last.IsZero() && iv.Start.Before(last) {
				t.Fatalf("interval %s before the previous end %s", iv.Start, last)
			}
			last = iv.End()
			var all, parts float64
			for _, s := range iv.Series {
				if err := s.Hist.Validate(); err != nil {
					t.Fatalf("%s: %v", s.Key, err)
				}
				if s.Key.Event == AllStatements {
					all += s.Hist.Count()
				} else {
					parts += s.Hist.Count()
				}
			}
			if all != parts {
				t.Fatalf("all statements %v, series %v", all, parts)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
