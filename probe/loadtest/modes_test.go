package loadtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/latscope/latscope/hist"
)

// The distributions below are SYNTHETIC (seeded math/rand/v2 draws): they
// have known modes, which no real sample can guarantee. Real latencies are
// tested in modes_real_test.go.

// cluster is a lognormal group of n latencies with median medianUS and
// log-standard-deviation sd (natural log). Two variants: logUniformTop > 0
// draws log-uniformly in [medianUS, logUniformTop) (a flat tail on the log
// axis); medianUS < 0 draws a Pareto tail from 200 µs with shape sd.
type cluster struct {
	n             int
	medianUS, sd  float64
	logUniformTop float64
}

// synth records the clusters into a Step-style histogram.
func synth(t testing.TB, seed uint64, cs ...cluster) *hist.Histogram {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	h := hist.NewExact(hist.Microsecond, -10)
	for _, c := range cs {
		for range c.n {
			v := c.medianUS * math.Exp(c.sd*rng.NormFloat64())
			if c.medianUS < 0 {
				v = 200 * math.Pow(1-rng.Float64(), -1/c.sd)
			}
			if c.logUniformTop > 0 {
				v = c.medianUS * math.Pow(c.logUniformTop/c.medianUS, rng.Float64())
			}
			if err := h.Record(v); err != nil {
				t.Fatal(err)
			}
		}
	}
	return h
}

// wantMode is an expected mode: centre within 10 %, fraction within 0.02.
type wantMode struct{ centerUS, fraction float64 }

func checkModes(t *testing.T, name string, got []Mode, want []wantMode) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d modes %s, want %d %+v", name, len(got), modesText(got), len(want), want)
		return
	}
	for i, w := range want {
		m := got[i]
		if !near(m.CenterUS, w.centerUS, 0.10) || math.Abs(m.Fraction-w.fraction) > 0.02 {
			t.Errorf("%s: mode %d is %s, want ~%gµs holding %.3f", name, i, modesText(got[i:i+1]), w.centerUS, w.fraction)
		}
		if !(m.LowUS <= m.CenterUS && m.CenterUS <= m.HighUS) || m.Label != "" {
			t.Errorf("%s: mode %d extent/label wrong: %+v", name, i, m)
		}
	}
}

func modesText(ms []Mode) string {
	s := ""
	for _, m := range ms {
		s += fmt.Sprintf("[%.3g µs (%.3g–%.3g) %.4f]", m.CenterUS, m.LowUS, m.HighUS, m.Fraction)
	}
	return s
}

func TestFindModesSynthetic(t *testing.T) {
	cases := []struct {
		name     string
		clusters []cluster
		opts     ModeOptions
		want     []wantMode
	}{
		{"cache and media: 62 % at 0.2 ms, 38 % at 6 ms",
			[]cluster{{62000, 200, 0.25, 0}, {38000, 6000, 0.5, 0}}, ModeOptions{},
			[]wantMode{{200, 0.62}, {6000, 0.38}}},
		{"the same with only 500 reads",
			[]cluster{{310, 200, 0.25, 0}, {190, 6000, 0.5, 0}}, ModeOptions{},
			[]wantMode{{200, 0.62}, {6000, 0.38}}},
		{"one broad lognormal",
			[]cluster{{100000, 1000, 1.0, 0}}, ModeOptions{},
			[]wantMode{{1000, 1}}},
		{"very few reads",
			[]cluster{{30, 1000, 0.5, 0}}, ModeOptions{},
			[]wantMode{{1000, 1}}},
		{"clusters 2× apart are one mode",
			[]cluster{{50000, 1000, 0.1, 0}, {50000, 2000, 0.1, 0}}, ModeOptions{},
			[]wantMode{{1414, 1}}},
		{"clusters 2× apart with MinRatio 1.5 are two",
			[]cluster{{50000, 1000, 0.1, 0}, {50000, 2000, 0.1, 0}}, ModeOptions{MinRatio: 1.5},
			[]wantMode{{1000, 0.5}, {2000, 0.5}}},
		{"a 3 % cluster is not reported",
			[]cluster{{97000, 150, 0.3, 0}, {3000, 8000, 0.3, 0}}, ModeOptions{},
			[]wantMode{{150, 0.97}}},
		{"a 3 % cluster with MinFraction 0.01 is",
			[]cluster{{97000, 150, 0.3, 0}, {3000, 8000, 0.3, 0}}, ModeOptions{MinFraction: 0.01},
			[]wantMode{{150, 0.97}, {8000, 0.03}}},
		{"a 6 % cluster is reported",
			[]cluster{{94000, 150, 0.3, 0}, {6000, 8000, 0.3, 0}}, ModeOptions{},
			[]wantMode{{150, 0.94}, {8000, 0.06}}},
		{"three tiers: cache, SSD, disk",
			[]cluster{{50000, 80, 0.2, 0}, {30000, 700, 0.3, 0}, {20000, 9000, 0.4, 0}}, ModeOptions{},
			[]wantMode{{80, 0.5}, {700, 0.3}, {9000, 0.2}}},
		// 10 % of reads spread log-uniformly from 300 µs to 100 ms (a flat
		// tail on the log axis): the tail joins the mode, whose median
		// moves to the 0.5/0.9 quantile of the lognormal (104 µs).
		{"flat long tail makes no mode",
			[]cluster{{90000, 100, 0.3, 0}, {10000, 300, 0, 100000}}, ModeOptions{},
			[]wantMode{{104, 1}}},
		{"sparse flat tail makes no mode",
			[]cluster{{900, 100, 0.3, 0}, {100, 300, 0, 100000}}, ModeOptions{},
			[]wantMode{{104, 1}}},
		// A heavy right tail: lognormal with sd 1.5 beyond a narrow core.
		{"heavy lognormal tail makes no mode",
			[]cluster{{80000, 200, 0.2, 0}, {20000, 200, 1.5, 0}}, ModeOptions{},
			[]wantMode{{200, 1}}},
	}
	for i, c := range cases {
		checkModes(t, c.name, FindModes(synth(t, uint64(i), c.clusters...), c.opts), c.want)
	}
}

// A single narrow spike: one mode inside the spike's bucket, holding all.
func TestFindModesSpike(t *testing.T) {
	for _, v := range []float64{0.5, 3, 250, 1e6} {
		h := hist.NewExact(hist.Microsecond, -10)
		_ = h.RecordN(v, 12345)
		ms := FindModes(h, ModeOptions{})
		if len(ms) != 1 || ms[0].Fraction != 1 {
			t.Fatalf("spike at %g µs: %s, want one mode holding 1", v, modesText(ms))
		}
		lo, hi := v*math.Exp2(-1.0/16), v*math.Exp2(1.0/16)
		for _, x := range []float64{ms[0].LowUS, ms[0].CenterUS, ms[0].HighUS} {
			if x < lo || x > hi {
				t.Errorf("spike at %g µs: mode %s outside the 1/16-octave bucket around it", v, modesText(ms))
			}
		}
	}
}

func TestFindModesEmptyAndInvalid(t *testing.T) {
	bad := hist.NewExact(hist.Microsecond, 0)
	bad.Counts = []float64{-1}
	for name, h := range map[string]*hist.Histogram{
		"nil": nil, "empty": hist.NewExact(hist.Microsecond, -10), "negative count": bad,
		"custom empty": mustCustom(t, []float64{1, 2, 4}),
	} {
		if ms := FindModes(h, ModeOptions{}); ms != nil {
			t.Errorf("%s: %s, want nil", name, modesText(ms))
		}
	}
	// Regression (fuzz): one open bucket from 0, bounds [0, +Inf] in ns,
	// makes hist.Rebin panic. hist reads the bucket as [0, 1) ns, which
	// FindModes reads as the octave [0.5, 1) ns; the empty zero bucket
	// [0, 0) holds nothing it can place.
	open, err := hist.NewCustom(hist.Nanosecond, []float64{0, math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	_ = open.AddCustom(0, 5)
	_ = open.AddCustom(-1, 5)
	if ms := FindModes(open, ModeOptions{}); len(ms) != 1 || ms[0].LowUS < 0.0005 || ms[0].HighUS > 0.001 {
		t.Errorf("bounds [0, +Inf] ns: %s, want one mode in [0.5, 1) ns", modesText(ms))
	}
	// Only the zero bucket [0, 1 µs): one mode, read as [0.5, 1) µs.
	z := hist.NewExact(hist.Microsecond, 0)
	_ = z.RecordN(0.25, 10)
	if ms := FindModes(z, ModeOptions{}); len(ms) != 1 || ms[0].Fraction != 1 || ms[0].LowUS < 0.5 || ms[0].HighUS > 1 {
		t.Errorf("zero bucket only: %s, want one mode in [0.5, 1) µs", modesText(ms))
	}
}

func mustCustom(t *testing.T, bounds []float64) *hist.Histogram {
	t.Helper()
	h, err := hist.NewCustom(hist.Microsecond, bounds)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// The modes do not depend on the histogram's layout: the cache-and-media
// latencies recorded in ns, in power-of-two buckets (Oracle-style upper
// bounds) or in linear custom buckets give the same two modes.
func TestFindModesAnyLayout(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9)) // synthetic
	ns := hist.NewExact(hist.Nanosecond, 0)
	pow2 := hist.NewBuckets(hist.Microsecond)
	var bounds []float64
	for b := 50.0; b <= 40000; b += 50 {
		bounds = append(bounds, b)
	}
	custom := mustCustom(t, append(bounds, math.Inf(1)))
	for i := range 100000 {
		v := 200 * math.Exp(0.25*rng.NormFloat64())
		if i%100 >= 62 {
			v = 6000 * math.Exp(0.5*rng.NormFloat64())
		}
		_ = ns.Record(v * 1000)
		_ = pow2.AddBound(hist.UpperBound, math.Exp2(math.Floor(math.Log2(v))+1), 1)
		_ = custom.Record(v)
	}
	want := []wantMode{{200, 0.62}, {6000, 0.38}}
	checkModes(t, "ns grid", FindModes(ns, ModeOptions{}), want)
	checkModes(t, "linear 50 µs buckets", FindModes(custom, ModeOptions{}), []wantMode{{200, 0.62}, {6000, 0.38}})
	// Octave buckets only locate each mode within its octaves: the fast
	// mode's reads lie in [128, 512) µs, the slow one's in [1, 32) ms.
	ms := FindModes(pow2, ModeOptions{})
	if len(ms) != 2 || ms[0].CenterUS < 128 || ms[0].CenterUS > 512 || ms[1].CenterUS < 2048 || ms[1].CenterUS > 16384 ||
		math.Abs(ms[0].Fraction-0.62) > 0.02 {
		t.Errorf("power-of-two buckets: %s, want ~0.62 in [128, 512) µs and the rest in [2, 16) ms", modesText(ms))
	}
}

// Robustness over seeds: the verdicts above are not luck of one draw.
// Every case is drawn with 25 seeds (synthetic); sample sizes are small,
// where noise makes false modes or hides real ones.
func TestFindModesAcrossSeeds(t *testing.T) {
	cases := []struct {
		name     string
		clusters []cluster
		modes    int
	}{
		{"cache and media, 100 reads", []cluster{{62, 200, 0.25, 0}, {38, 6000, 0.5, 0}}, 2},
		{"two clusters 4.5× apart, 200 reads", []cluster{{100, 1000, 0.15, 0}, {100, 4500, 0.15, 0}}, 2},
		{"three tiers, 300 reads", []cluster{{150, 80, 0.2, 0}, {90, 700, 0.3, 0}, {60, 9000, 0.4, 0}}, 3},
		{"broad lognormal, 300 reads", []cluster{{300, 1000, 1.0, 0}}, 1},
		{"flat tail, 10000 reads", []cluster{{9000, 100, 0.3, 0}, {1000, 300, 0, 100000}}, 1},
		{"heavy tail, 1000 reads", []cluster{{800, 200, 0.2, 0}, {200, 200, 1.5, 0}}, 1},
		{"Pareto tail, 1000 reads", []cluster{{900, 100, 0.3, 0}, {100, -1, 1, 0}}, 1},
		{"3 % far cluster, 1000 reads", []cluster{{970, 150, 0.3, 0}, {30, 8000, 0.3, 0}}, 1},
		{"clusters 2× apart, 1000 reads", []cluster{{500, 1000, 0.1, 0}, {500, 2000, 0.1, 0}}, 1},
	}
	for _, c := range cases {
		for seed := range uint64(25) {
			if ms := FindModes(synth(t, 1000+seed, c.clusters...), ModeOptions{}); len(ms) != c.modes {
				t.Errorf("%s, seed %d: %s, want %d modes", c.name, 1000+seed, modesText(ms), c.modes)
			}
		}
	}
}
