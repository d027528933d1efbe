package recording

import (
	"bytes"
	"encoding/hex"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

var update = flag.Bool("update", false, "rewrite the golden recordings in testdata")

// TestGoldenBytes pins the encoding: the first two intervals of
// example_latency_data.txt must encode to exactly the bytes of
// testdata/example-2.lsr, the file docs/recording-format.md dissects.
func TestGoldenBytes(t *testing.T) {
	checkGolden(t, exampleIntervals(t, false)[:2], filepath.Join("testdata", "example-2.lsr"))
}

// goldenCustomIntervals are the two intervals of testdata/custom-edges.lsr,
// which docs/recording-format.md dissects: a synthetic NetApp-style series
// (µs edges <20us ... <1ms, >1ms) read from a cumulative counter, so sums are
// bucket-midpoint estimates; the second interval reuses the first's edges.
func goldenCustomIntervals(t testing.TB) []stream.Interval {
	edges := []float64{20, 40, 60, 80, 100, 200, 400, 600, 800, 1000, math.Inf(1)}
	counts := [][]float64{
		{3, 17, 25, 6, 0, 2, 0, 0, 0, 0, 1}, // zero bucket first
		{0, 12, 30, 4, 1, 0, 0, 0, 0, 0, 0},
	}
	start := time.Date(2015, 7, 14, 10, 0, 0, 0, time.UTC)
	var out []stream.Interval
	for i, cs := range counts {
		h, err := hist.NewCustom(hist.Microsecond, edges)
		if err != nil {
			t.Fatal(err)
		}
		for j, c := range cs {
			if err := h.AddCustom(j-1, c); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, stream.Interval{Source: "vol1", Start: start.Add(time.Duration(i) * 5 * time.Second), Duration: 5 * time.Second,
			Series: []stream.SeriesHist{{Key: stream.Key{Event: "nfs_protocol_read_latency"}, Hist: h}}})
	}
	return out
}

// TestGoldenCustomEdges pins the format 1.1 custom section.
func TestGoldenCustomEdges(t *testing.T) {
	checkGolden(t, goldenCustomIntervals(t), filepath.Join("testdata", "custom-edges.lsr"))
}

// checkGolden checks that the intervals encode to the golden file and that
// the file decodes to them. A golden written by an older minor version (the
// 1.1 files example-2.lsr and custom-edges.lsr) must still read identically,
// and the current writer must write the same bytes but for the minor
// version; -update never rewrites it.
func checkGolden(t *testing.T, ivs []stream.Interval, golden string) {
	t.Helper()
	data := encode(t, ivs)
	old, _ := os.ReadFile(golden)
	if *update && (old == nil || goldenMinor(t, old) == MinorVersion) {
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden -update once)", err)
	}
	want := bytes.Clone(file)
	want[len(Magic)+1] = MinorVersion // the header's minor version byte
	if !bytes.Equal(data, want) {
		t.Fatalf("encoding changed: got\n%swant\n%s", hex.Dump(data), hex.Dump(want))
	}
	got, err := decodeAll(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := diffIntervals(ivs, got); err != nil {
		t.Fatal(err)
	}
}

// goldenMinor returns the minor version of a golden recording's header
// (a one-byte uvarint, as every version so far).
func goldenMinor(t *testing.T, data []byte) byte {
	t.Helper()
	if len(data) < len(Magic)+2 || string(data[:len(Magic)]) != Magic || data[len(Magic)] != MajorVersion {
		t.Fatalf("golden file is not a version %d recording", MajorVersion)
	}
	return data[len(Magic)+1]
}

// TestOldGoldensAreVersion11 keeps the goldens what they are: files
// written before mean series existed, which must keep reading identically.
func TestOldGoldensAreVersion11(t *testing.T) {
	for _, name := range []string{"example-2.lsr", "custom-edges.lsr"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if m := goldenMinor(t, data); m != 1 {
			t.Errorf("%s: minor version %d, want 1", name, m)
		}
	}
}

// TestGoldenDamageAsDocumented checks the damage reports that
// docs/recording-format.md quotes for testdata/example-2.lsr.
func TestGoldenDamageAsDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "example-2.lsr"))
	if err != nil {
		t.Fatal(err)
	}
	got, problems, err := replayBytes(t, data[:0x90], ReplayOptions{})
	if err != nil || len(got) != 1 || len(problems) != 1 ||
		problems[0].Reason != "byte offset 136: frame of 44 bytes cut short after 8 (recording truncated?)" {
		t.Errorf("cut inside frame 4: %d intervals, %v, %v", len(got), problems, err)
	}
	flipped := bytes.Clone(data)
	flipped[0x70] ^= 0x10
	got, problems, err = replayBytes(t, flipped, ReplayOptions{})
	if err != nil || len(got) != 0 || len(problems) != 1 ||
		!strings.HasPrefix(problems[0].Reason, "byte offset 80: frame checksum mismatch") {
		t.Errorf("bit flip in frame 3: %d intervals, %v, %v", len(got), problems, err)
	}
}

// TestGoldenCustomEdgesAsVersion10 checks what docs/recording-format.md
// says a 1.0 reader sees in testdata/custom-edges.lsr.
func TestGoldenCustomEdgesAsVersion10(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "custom-edges.lsr"))
	if err != nil {
		t.Fatal(err)
	}
	rd, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	rd.asVersion10 = true
	iv, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	h := iv.Series[0].Hist
	want := []hist.Bucket{{Lower: 0, Upper: 16, Count: 3}, {Lower: 16, Upper: 32, Count: 17}, {Lower: 32, Upper: 64, Count: 31},
		{Lower: 64, Upper: 128, Count: 2}, {Lower: 512, Upper: 1024, Count: 1, Capped: true}}
	if got := h.Buckets(); !slices.Equal(got, want) || h.IsCustom() || h.Count() != 54 || h.Sum != 4010 || !h.TopOpen {
		t.Errorf("1.0 view: %+v, sum %g", got, h.Sum)
	}
}
