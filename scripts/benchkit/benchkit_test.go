package benchkit

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	in := []float64{30, 10, 20}
	for _, c := range []struct {
		vs   []float64
		want float64
	}{
		{in, 20}, {[]float64{5}, 5}, {[]float64{4, 1, 3, 2}, 2.5}, {nil, 0},
	} {
		if got := Median(c.vs); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.vs, got, c.want)
		}
	}
	if !slices.Equal(in, []float64{30, 10, 20}) {
		t.Errorf("Median reordered its input: %v", in)
	}
	type run struct{ p50 float64 }
	if got := MedianOf([]run{{3}, {1}, {2}}, func(r run) float64 { return r.p50 }); got != 2 {
		t.Errorf("MedianOf = %v", got)
	}
}

func TestRatioWithin(t *testing.T) {
	if r := Ratio(3, 2); r != 1.5 {
		t.Errorf("Ratio(3, 2) = %v", r)
	}
	if r := Ratio(3, 0); !math.IsNaN(r) || JSONRatio(r) != 0 || Within(r, 10) {
		t.Errorf("Ratio(3, 0) = %v", r)
	}
	// Edges pass despite float rounding (0.85 and 1.15 are not exact).
	for r, want := range map[float64]bool{42.5 / 50: true, 57.5 / 50: true, 0.8499: false, 1.1501: false, 1: true} {
		if Within(r, 0.15) != want {
			t.Errorf("Within(%v, 0.15) = %v", r, !want)
		}
	}
}

func TestParseInts(t *testing.T) {
	got, err := ParseInts("64, 1024,14", 14, 1<<20)
	if err != nil || !slices.Equal(got, []int{64, 1024, 14}) {
		t.Errorf("%v %v", got, err)
	}
	for _, s := range []string{"", "13", "64,", "x", "2000000", "1.5"} {
		if _, err := ParseInts(s, 14, 1<<20); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestJSONStartTail(t *testing.T) {
	b, err := JSONStart([]byte("warning: x\n  {\"a\": 1}\n"))
	if err != nil || string(b) != "  {\"a\": 1}\n" {
		t.Errorf("%q %v", b, err)
	}
	if _, err := JSONStart([]byte("Error: no\n")); err == nil {
		t.Error("no JSON accepted")
	}
	if got := Tail([]byte("a\nb\nc\n"), 2); got != "b\nc" {
		t.Errorf("Tail = %q", got)
	}
	if Indent("") != "" || Indent("a\nb") != "\n    a\n    b" {
		t.Error("Indent")
	}
}

func TestWriteJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "out.json")
	if err := WriteJSON(path, map[string]float64{"ratio": JSONRatio(math.NaN())}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != "{\n  \"ratio\": 0\n}\n" {
		t.Errorf("%q", b)
	}
	if err := WriteJSON(path, math.NaN()); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("NaN: %v", err)
	}
}

func TestGatherMachine(t *testing.T) {
	m := GatherMachine(t.Context())
	if m.CPU == "" || m.Cores < 1 || m.Go == "" || m.Date == "" {
		t.Errorf("%+v", m)
	}
	if _, err := os.Stat("/proc/sys/kernel/osrelease"); err == nil && m.Kernel == "" {
		t.Errorf("no kernel: %+v", m)
	}
}

func TestParsePeakRSS(t *testing.T) {
	if kb, err := ParsePeakRSS([]byte("26524\n")); kb != 26524 || err != nil {
		t.Errorf("%d, %v", kb, err)
	}
	// GNU time's note before the figure when the command fails.
	if kb, err := ParsePeakRSS([]byte("Command exited with non-zero status 1\n1234\n")); kb != 1234 || err != nil {
		t.Errorf("%d, %v", kb, err)
	}
	for _, bad := range []string{"", "x", "-1"} {
		if _, err := ParsePeakRSS([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestRunMeasuresTheChildsOwnPeakRSS: a child that touches little memory
// must not inherit the harness's peak (the CLONE_VM floor).
func TestRunMeasuresTheChildsOwnPeakRSS(t *testing.T) {
	if !PeakRSSMeasured() {
		t.Skip("GNU time not installed")
	}
	ballast := make([]byte, 64<<20) // raise the harness's own peak RSS
	for i := range ballast {
		ballast[i] = 1
	}
	p, err := Run(context.Background(), []string{"true"}, 10*time.Second)
	if err != nil || p.MaxRSSKB <= 0 || p.MaxRSSKB > 32<<10 {
		t.Errorf("true: peak RSS %d KiB, %v (the harness holds 64 MiB)", p.MaxRSSKB, err)
	}
	_ = ballast[len(ballast)-1]
}
