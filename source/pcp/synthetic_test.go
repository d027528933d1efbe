package pcp

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

var (
	pmidRead     = pmid(0, 4)  // disk.dev.read, U64 counter
	pmidAvactive = pmid(0, 46) // disk.dev.avactive, U32 counter in ms
	pmidFree     = pmid(1, 2)  // mem.util.free, U64 instant in kB
)

func diskMeta(version int, at time.Time) [][]byte {
	tag := uint32(typeIndom)
	if version == 2 {
		tag = typeIndomV2
	}
	return [][]byte{
		desc(pmidRead, typeU64, indomDisk, semCounter, unitsOne, "disk.dev.read"),
		desc(pmidAvactive, typeU32, indomDisk, semCounter, unitsMS, "disk.dev.avactive"),
		desc(pmidFree, typeU64, indomNull, semInstant, unitsKB, "mem.util.free"),
		indomRecord(version, tag, at, indomDisk, []int32{0}, []string{"vda"}),
	}
}

func sample(version int, at time.Time, reads, busy, free uint64) []byte {
	return result(version, at,
		valueSet{pmidRead, typeU64, []value{{0, reads}}},
		valueSet{pmidAvactive, typeU32, []value{{0, busy}}},
		valueSet{pmidFree, typeU64, []value{{nullInst, free}}})
}

// TestCountersWrapResetAndMarks: a 32-bit counter that wraps keeps its
// rate; a 64-bit counter that goes down was reset and has no value in
// that window; a mark record is a gap and no rate spans it.
func TestCountersWrapResetAndMarks(t *testing.T) {
	for _, version := range []int{2, 3} {
		t0 := time.Unix(1_800_000_000, 0).UTC()
		at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
		base := synthArchive(t, version, diskMeta(version, t0), [][]byte{
			sample(version, at(0), 100, math.MaxUint32-300, 1000),
			sample(version, at(1), 150, 200, 2000),   // busy wrapped: +501 ms
			sample(version, at(2), 10, 700, 3000),    // reads reset
			sample(version, at(3), 30, 1200, 4000),   // 20 reads
			result(version, at(3.5)),                 // mark: pmlogger stopped
			sample(version, at(10), 500, 1300, 5000), // no rate across the mark
			sample(version, at(12), 540, 2300, 6000),
		})
		ivs := readAll(t, base+".0", readOptions{})
		type want struct {
			start, secs float64
			gap         bool
			reads, util float64 // NaN: no value
			free        float64
		}
		nan := math.NaN()
		wants := []want{
			{0, 1, false, 50, 50.1, 2000},
			{1, 1, false, nan, 50, 3000},
			{2, 1, false, 20, 50, 4000},
			{3, 7, true, nan, nan, nan},
			{10, 2, false, 20, 50, 6000},
		}
		if len(ivs) != len(wants) {
			t.Fatalf("v%d: %d intervals, want %d: %+v", version, len(ivs), len(wants), ivs)
		}
		for i, w := range wants {
			iv := ivs[i]
			if !iv.Start.Equal(at(w.start)) || iv.Duration != time.Duration(w.secs*float64(time.Second)) || iv.Gap != w.gap {
				t.Errorf("v%d interval %d: start %s duration %s gap %v, want +%gs %gs gap %v", version, i, iv.Start, iv.Duration, iv.Gap, w.start, w.secs, w.gap)
			}
			if iv.Source != "host:synth" {
				t.Errorf("source %q", iv.Source)
			}
			for _, c := range []struct {
				event, inst string
				want        float64
			}{{"disk.r/s", "vda", w.reads}, {"disk.%util", "vda", w.util}, {"mem.kbmemfree", "", w.free}} {
				got, ok := meanOf(iv, c.event, c.inst)
				if math.IsNaN(c.want) {
					if ok {
						t.Errorf("v%d interval %d: %s = %g, want no value", version, i, c.event, got)
					}
					continue
				}
				if !ok || math.Abs(got-c.want) > 1e-9 {
					t.Errorf("v%d interval %d: %s = %g (present %v), want %g", version, i, c.event, got, ok, c.want)
				}
			}
		}
	}
}

// TestDeltaInstanceDomains: a v3 delta record adds vdb and deletes vda;
// instances keep their names from the observation in force.
func TestDeltaInstanceDomains(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0).UTC()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	meta := diskMeta(3, t0)
	meta = append(meta, indomRecord(3, typeIndomDelta, at(2), indomDisk, []int32{1, 0}, []string{"vdb", ""}))
	reads := func(s int, vals ...value) []byte {
		return result(3, at(s), valueSet{pmidRead, typeU64, vals})
	}
	base := synthArchive(t, 3, meta, [][]byte{
		reads(0, value{0, 10}),
		reads(1, value{0, 20}),
		reads(2, value{1, 100}),
		reads(3, value{1, 130}),
	})
	ivs := readAll(t, base, readOptions{})
	if len(ivs) != 3 {
		t.Fatalf("%d intervals", len(ivs))
	}
	if v, ok := meanOf(ivs[0], "disk.r/s", "vda"); !ok || v != 10 {
		t.Errorf("vda first second: %v %v", v, ok)
	}
	if len(ivs[1].Means) != 0 {
		t.Errorf("vdb's first sample has no rate yet: %+v", ivs[1].Means)
	}
	if v, ok := meanOf(ivs[2], "disk.r/s", "vdb"); !ok || v != 30 {
		t.Errorf("vdb after the delta: %v %v (%+v)", v, ok, ivs[2].Means)
	}
	a, err := Open(base)
	if err != nil {
		t.Fatal(err)
	}
	if got := a.Meta.InstName(indomDisk, 0, at(3)); got != "0" {
		t.Errorf("vda after its deletion is named %q, want its number", got)
	}
	if got := a.Meta.InstName(indomDisk, 0, at(1)); got != "vda" {
		t.Errorf("vda before the delta: %q", got)
	}
}

// TestFromUntil selects windows by start, From ≤ start < To, on a real
// archive, also when the start is inside a later volume (the index).
func TestFromUntil(t *testing.T) {
	base := archiveBase(t, "host-v3")
	all := readAll(t, base, readOptions{})
	from, to := all[25].Start, all[45].Start
	got := readAll(t, base, readOptions{from: from, to: to})
	if len(got) != 20 || !got[0].Start.Equal(from) || !got[19].Start.Equal(all[44].Start) {
		t.Fatalf("--from %s --until %s: %d windows from %s", from, to, len(got), got[0].Start)
	}
	for i := range got {
		if len(got[i].Means) != len(all[25+i].Means) {
			t.Errorf("window %d: %d series, the whole read has %d", i, len(got[i].Means), len(all[25+i].Means))
		}
	}
}

// TestSeriesPattern: --series selects by event glob, as in the archive.
func TestSeriesPattern(t *testing.T) {
	base := archiveBase(t, "host-v3")
	src, err := Store().Open(base, source.Options{Series: "disk.*"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = src.Run(context.Background(), func(iv stream.Interval) error {
		for _, m := range iv.Means {
			if !strings.HasPrefix(m.Key.Event, "disk.") {
				t.Fatalf("--series disk.* kept %s", m.Key)
			}
			n++
		}
		return nil
	})
	if err != nil || n < 59*10 {
		t.Errorf("%d disk figures, %v", n, err)
	}
	if _, err := Store().Open(base, source.Options{Series: "disk.[r"}, nil); err == nil {
		t.Errorf("a malformed --series is accepted")
	}
}

// TestDetection accepts the base name and every file of an archive, and
// nothing else.
func TestDetection(t *testing.T) {
	base := archiveBase(t, "host-v3")
	for _, p := range []string{base, base + ".meta", base + ".index", base + ".0", base + ".2"} {
		if got, ok := BaseName(p); !ok || got != base {
			t.Errorf("BaseName(%s) = %q, %v", p, got, ok)
		}
	}
	for _, p := range []string{base + ".7x", base + "-v3", testdataREADME(t)} {
		if _, ok := BaseName(p); ok {
			t.Errorf("BaseName(%s) says it is an archive", p)
		}
	}
	if _, err := Store().Open(testdataREADME(t), sourceOptions(), nil); err == nil || !strings.Contains(err.Error(), "not a PCP archive") {
		t.Errorf("--input-format pcp on a text file: %v", err)
	}
}

func testdataREADME(t *testing.T) string {
	return strings.TrimSuffix(archiveBase(t, "host-v2"), "host-v2") + "README.md"
}

// TestVersionsAgree: the v2 and v3 archives were recorded from the same
// pmcd at the same time: the same series, and values close (the loggers
// fetched a few ms apart).
func TestVersionsAgree(t *testing.T) {
	v2 := readAll(t, archiveBase(t, "host-v2"), readOptions{})
	v3 := readAll(t, archiveBase(t, "host-v3"), readOptions{})
	if len(v2) != 59 || len(v3) != 59 {
		t.Fatalf("%d and %d windows from 60 samples each", len(v2), len(v3))
	}
	// Per-request figures (d_await, %drqm...) exist only in windows with
	// such requests, which the loggers may split differently: compare the
	// series over the whole minute.
	keys := func(ivs []stream.Interval) map[stream.Key]int {
		seen := map[stream.Key]int{}
		for _, iv := range ivs {
			if len(iv.Means) < 100 {
				t.Errorf("a window with %d series", len(iv.Means))
			}
			for _, m := range iv.Means {
				seen[m.Key]++
			}
		}
		return seen
	}
	k2, k3 := keys(v2), keys(v3)
	if len(k2) != len(k3) || len(k2) < 120 {
		t.Errorf("%d and %d series", len(k2), len(k3))
	}
	for k := range k2 {
		if _, ok := k3[k]; !ok {
			t.Errorf("%s only in the v2 archive", k)
		}
	}
	if v, ok := meanOf(v2[10], "mem.kbmemused", ""); !ok || v < 1000 {
		t.Errorf("kbmemused %v %v", v, ok)
	}
}

// TestCompressedArchive: pmlogger_daily's xz-compressed archives are
// recognised and refused with what to do.
func TestCompressedArchive(t *testing.T) {
	dir := t.TempDir()
	base := dir + "/20260101"
	for _, f := range []string{".meta.xz", ".0.xz", ".index"} {
		if err := os.WriteFile(base+f, []byte("\xfd7zXZ\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{base, base + ".0.xz", base + ".meta.xz"} {
		if !Store().Match(p) {
			t.Errorf("%s is not recognised", p)
		}
		_, err := Store().Open(p, sourceOptions(), nil)
		if err == nil || !strings.Contains(err.Error(), "xz -dk "+base+".*.xz") {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// TestMetricsAtDifferentRates: pmlogger configurations log groups at
// different intervals; a counter's rate spans from its own previous
// reading, and a gauge is there in the windows that read it.
func TestMetricsAtDifferentRates(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0).UTC()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	reads := func(s int, n uint64) valueSet { return valueSet{pmidRead, typeU64, []value{{0, n}}} }
	busy := func(ms uint64) valueSet { return valueSet{pmidAvactive, typeU32, []value{{0, ms}}} }
	free := func(kb uint64) valueSet { return valueSet{pmidFree, typeU64, []value{{nullInst, kb}}} }
	base := synthArchive(t, 3, diskMeta(3, t0), [][]byte{
		result(3, at(0), reads(0, 0), busy(0), free(100)),
		result(3, at(1), reads(1, 10)),
		result(3, at(2), reads(2, 30), busy(1000), free(200)), // busy: 1000 ms over 2 s
		result(3, at(3), reads(3, 60)),
	})
	ivs := readAll(t, base, readOptions{})
	if len(ivs) != 3 {
		t.Fatalf("%d windows", len(ivs))
	}
	for i, want := range []struct {
		reads, util, free float64
		hasUtil           bool
	}{{10, 0, 0, false}, {20, 50, 200, true}, {30, 0, 0, false}} {
		if v, _ := meanOf(ivs[i], "disk.r/s", "vda"); v != want.reads {
			t.Errorf("window %d: r/s %v, want %v", i, v, want.reads)
		}
		u, ok := meanOf(ivs[i], "disk.%util", "vda")
		if ok != want.hasUtil || u != want.util {
			t.Errorf("window %d: %%util %v (%v), want %v (%v)", i, u, ok, want.util, want.hasUtil)
		}
		if f, ok := meanOf(ivs[i], "mem.kbmemfree", ""); ok != want.hasUtil || f != want.free {
			t.Errorf("window %d: kbmemfree %v (%v)", i, f, ok)
		}
	}
	// The 2-s span of %util is counted as 2 s of elapsed time in that
	// window's mean, so merged windows stay exact.
	for _, m := range ivs[1].Means {
		if m.Key.Event == "disk.%util" && m.Count != 2000 {
			t.Errorf("%%util count %v ms, want 2000", m.Count)
		}
	}
}
