package recording

import (
	"bytes"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/source"
)

var update = flag.Bool("update", false, "rewrite testdata/example-2.lsr")

// TestGoldenBytes pins the encoding: the first two intervals of
// example_latency_data.txt must encode to exactly the bytes of
// testdata/example-2.lsr, the file docs/recording-format.md dissects.
func TestGoldenBytes(t *testing.T) {
	ivs := exampleIntervals(t, false)[:2]
	data := encode(t, ivs)
	golden := filepath.Join("testdata", "example-2.lsr")
	if *update {
		if err := os.WriteFile(golden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGoldenBytes -update once)", err)
	}
	if !bytes.Equal(data, want) {
		t.Fatalf("encoding changed: got\n%swant\n%s", hex.Dump(data), hex.Dump(want))
	}
	got, err := decodeAll(want)
	if err != nil {
		t.Fatal(err)
	}
	if err := diffIntervals(ivs, got); err != nil {
		t.Fatal(err)
	}
}

// TestGoldenDamageAsDocumented checks the damage reports that
// docs/recording-format.md quotes for testdata/example-2.lsr.
func TestGoldenDamageAsDocumented(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "example-2.lsr"))
	if err != nil {
		t.Fatal(err)
	}
	got, problems, err := replayBytes(t, data[:0x90], source.Options{})
	if err != nil || len(got) != 1 || len(problems) != 1 ||
		problems[0].Reason != "byte offset 136: frame of 44 bytes cut short after 8 (recording truncated?)" {
		t.Errorf("cut inside frame 4: %d intervals, %v, %v", len(got), problems, err)
	}
	flipped := bytes.Clone(data)
	flipped[0x70] ^= 0x10
	got, problems, err = replayBytes(t, flipped, source.Options{})
	if err != nil || len(got) != 0 || len(problems) != 1 ||
		!strings.HasPrefix(problems[0].Reason, "byte offset 80: frame checksum mismatch") {
		t.Errorf("bit flip in frame 3: %d intervals, %v, %v", len(got), problems, err)
	}
}
