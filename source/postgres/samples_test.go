package postgres

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
)

// The three committed real samples (testdata/PROVENANCE.md) hold the same
// 60 timed statements.
var realSamples = []string{"testdata/pg15-stderr.log", "testdata/pg15.csv", "testdata/pg15.json"}

func TestRealSamplesExactly(t *testing.T) {
	// Independent of the parser: the stderr sample read with a regexp,
	// counted per 100 ms window of the log time.
	b, err := os.ReadFile("testdata/pg15-stderr.log")
	if err != nil {
		t.Fatal(err)
	}
	perWindow := map[string]int{}
	var count int
	var sum float64
	for _, m := range timedStatementWithTime.FindAllStringSubmatch(string(b), -1) {
		ms, _ := strconv.ParseFloat(m[2], 64)
		count++
		sum += ms * 1000
		perWindow[m[1][:len("2026-11-22 04:53:00.4")]]++
	}
	if count != 60 || math.Abs(sum-157166) > 1e-6 {
		t.Fatalf("regexp count %d sum %v (PROVENANCE.md says 60, 157.166 ms)", count, sum)
	}
	for _, path := range realSamples {
		t.Run(filepath.Base(path), func(t *testing.T) {
			if v := Detect(readPrefix(t, path, 64<<10)); v != input.Yes {
				t.Errorf("Detect = %v", v)
			}
			ivs, diag := readLog(t, path, source.Options{Interval: 100 * time.Millisecond})
			if n := diag.Count(filepath.Base(path)); n != 0 {
				t.Errorf("%d malformed", n)
			}
			tot := seriesTotals(t, ivs)
			if all := tot[AllStatements]; all[0] != 60 || math.Abs(all[1]-157166) > 1e-6 {
				t.Errorf("all statements %v", all)
			}
			if s := tot["select pg_sleep(?)"]; s != [2]float64{1, 20502} {
				t.Errorf("pg_sleep: %v", s)
			}
			if s := tot["select ? as a, ? as b"]; s != [2]float64{1, 186} {
				t.Errorf("multi-line statement: %v", s)
			}
			if s := tot["insert into pgbench_tellers(tid,bid,tbalance) values (?,?,?)"]; s[0] != 10 {
				t.Errorf("tellers inserts: %v", s)
			}
			if first := ivs[0].Start; !first.Equal(time.Date(2026, 11, 22, 4, 53, 0, 200e6, time.UTC)) {
				t.Errorf("first interval starts %s", first)
			}
			got := map[string]int{}
			for _, iv := range ivs {
				if iv.Duration != 100*time.Millisecond {
					t.Errorf("interval %s lasts %s", iv.Start, iv.Duration)
				}
				for _, s := range iv.Series {
					if s.Key.Event == AllStatements {
						got[iv.Start.Format("2006-01-02 15:04:05.0")] += int(s.Hist.Count())
					}
				}
			}
			if len(got) != len(perWindow) {
				t.Errorf("windows %v, want %v", got, perWindow)
			}
			for w, n := range perWindow {
				if got[w] != n {
					t.Errorf("window %s: %d statements, want %d", w, got[w], n)
				}
			}
		})
	}
}

func TestEventFilterKeepsOnlyTheTotal(t *testing.T) {
	ivs, _ := readLog(t, realSamples[0], source.Options{Events: []string{AllStatements}})
	tot := seriesTotals(t, ivs)
	if len(tot) != 1 || tot[AllStatements][0] != 60 {
		t.Errorf("series %v", tot)
	}
}

func TestOtherFormatsAreNotClaimed(t *testing.T) {
	var files []string
	testenv.WalkData(t, func(p string) { files = append(files, p) })
	if len(files) < 10 {
		t.Fatalf("only %d real files", len(files))
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if v := Detect(b[:min(len(b), 64<<10)]); v == input.Yes {
			t.Errorf("%s: Detect = Yes", p)
		}
	}
}
