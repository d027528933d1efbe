package fio

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// These tests run the real fio on a small scratch file (psync, 4 KiB, 8 MiB)
// and hold latscope's reading of its outputs against fio's own numbers.

// fioBase is the common job: queue depth 1 random reads of a small file.
func fioBase(dir, name string) []string {
	return []string{"--name=" + name, "--filename=" + filepath.Join(dir, "data"), "--ioengine=psync",
		"--bs=4k", "--size=8m"}
}

// A 1.5 s random-read run: the JSON's bins become one interval whose count is
// fio's N and total_ios, whose percentiles are fio's within one bin, and
// whose sum is fio's mean × N; the histogram log of the same run holds the
// same I/Os per bin, less the last partial window fio does not log.
func TestRandReadJSONAndHistLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := append(fioBase(dir, "randread"), "--rw=randread", "--runtime=1500ms", "--time_based",
		"--write_hist_log=h", "--log_hist_msec=300", "--output-format=json+", "--output=run.json")
	runFio(t, dir, args...)
	jsonPath := filepath.Join(dir, "run.json")
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if v := DetectJSON(data); v != input.Yes {
		t.Fatalf("DetectJSON = %v on fio's JSON", v)
	}
	if v := DetectHistLog(data); v != input.No {
		t.Errorf("DetectHistLog = %v on fio's JSON", v)
	}
	ref := readReport(t, data)
	rd := ref.Jobs[0].Read
	if rd.Clat.N == 0 || rd.TotalIOs != rd.Clat.N || rd.Clat.binsTotal() != rd.Clat.N {
		t.Fatalf("fio's own numbers disagree: total_ios %d, N %d, bins %d", rd.TotalIOs, rd.Clat.N, rd.Clat.binsTotal())
	}

	res := runFile(t, JSONFormat(), jsonPath, source.Options{Location: time.UTC})
	if res.Err != nil || len(res.Malformed()) > 0 || len(res.Diag.Warnings()) > 0 {
		t.Fatalf("err %v, malformed %q, warnings %q", res.Err, res.Malformed(), res.Diag.Warnings())
	}
	if len(res.Intervals) != 1 {
		t.Fatalf("%d intervals, want 1 (one job)", len(res.Intervals))
	}
	iv := res.Intervals[0]
	if got := res.events(); len(got) != 1 || got[0] != "randread read clat" {
		t.Fatalf("series %q, want [randread read clat] (slat and lat have no bins without *_percentiles=1)", got)
	}
	if !iv.End().Equal(time.UnixMilli(ref.TimestampMs)) || iv.Duration != time.Duration(rd.Runtime)*time.Millisecond || iv.Relative {
		t.Errorf("window %s + %s, want ending at timestamp_ms %d after the read runtime %d ms", iv.Start, iv.Duration, ref.TimestampMs, rd.Runtime)
	}
	h := iv.Series[0].Hist
	if h.Count() != float64(rd.Clat.N) {
		t.Errorf("count %.0f, want fio's N %d", h.Count(), rd.Clat.N)
	}
	if !h.SumExact || math.Abs(h.Mean()-rd.Clat.Mean) > 1e-6*rd.Clat.Mean {
		t.Errorf("mean %.6f ns (exact %v), want fio's %.6f", h.Mean(), h.SumExact, rd.Clat.Mean)
	}
	checkPercentiles(t, "json", h, rd.Clat.Percentile, 1)
	checkBinsInBuckets(t, h, rd.Clat.Bins)

	// The histogram log of the same run.
	logPath := filepath.Join(dir, "h_clat_hist.1.log")
	lines := readHistLog(t, logPath)
	lres := runFile(t, HistLogFormat(), logPath, source.Options{Location: time.UTC})
	if lres.Err != nil || len(lres.Malformed()) > 0 {
		t.Fatalf("err %v, malformed %q", lres.Err, lres.Malformed())
	}
	if len(lres.Intervals) != len(lines) {
		t.Fatalf("%d intervals from %d lines", len(lres.Intervals), len(lines))
	}
	var logTotal int64
	for i, l := range lines {
		got := eventCount(lres.Intervals[i])
		if got != float64(l.total()) {
			t.Errorf("line %d: %.0f I/Os, the line's counts add up to %d", i+1, got, l.total())
		}
		logTotal += l.total()
	}
	// fio logs no line for the window the job ends in: the log holds a
	// subset of the JSON's I/Os, bin by bin.
	lh := lres.total("read clat")
	if logTotal == 0 || logTotal > rd.Clat.N || lh.Count() != float64(logTotal) {
		t.Fatalf("log total %d (latscope %.0f), JSON N %d", logTotal, lh.Count(), rd.Clat.N)
	}
	sub := hist.RebinLike(lh, h)
	for i := range h.Counts {
		if sub.Counts[i] > h.Counts[i] {
			t.Fatalf("bucket %d: log %.0f > JSON %.0f", i, sub.Counts[i], h.Counts[i])
		}
	}
	checkAnchor(t, lres, logPath, lines)
	if first := lres.Intervals[0].Start; math.Abs(first.Sub(iv.Start).Seconds()) > 1 {
		t.Errorf("the log's job start %s is more than 1 s from the JSON's %s", first, iv.Start)
	}
}

// checkBinsInBuckets checks that every value fio printed as a bins key lies
// in a latscope bucket holding exactly that key's count: fio's bins and
// latscope's buckets are the same.
func checkBinsInBuckets(t *testing.T, h *hist.Histogram, bins map[string]int64) {
	t.Helper()
	buckets := h.Buckets()
	if len(buckets) != len(bins) {
		t.Errorf("%d non-empty buckets for %d bins", len(buckets), len(bins))
	}
	for k, c := range bins {
		v, err := strconv.ParseFloat(k, 64)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, b := range buckets {
			if b.Lower <= v && v < b.Upper {
				found = true
				if b.Count != float64(c) {
					t.Errorf("bin %s ns: bucket [%g, %g) holds %.0f, fio counted %d", k, b.Lower, b.Upper, b.Count, c)
				}
			}
		}
		if !found {
			t.Errorf("bin %s ns (%d I/Os) is in no non-empty bucket", k, c)
		}
	}
}

// checkAnchor checks the log's windows: consecutive per direction from the
// job start, the last ending at the file's modification time.
func checkAnchor(t *testing.T, res result, path string, lines []histLogLine) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	last := res.Intervals[len(res.Intervals)-1]
	if !last.End().Equal(st.ModTime()) {
		t.Errorf("last window ends %s, file modified %s", last.End(), st.ModTime())
	}
	origin := st.ModTime().Add(-time.Duration(lines[len(lines)-1].ms) * time.Millisecond)
	prev := map[int64]int64{}
	for i, l := range lines {
		iv := res.Intervals[i]
		wantStart := origin.Add(time.Duration(prev[l.ddir]) * time.Millisecond)
		if !iv.Start.Equal(wantStart) || iv.Duration != time.Duration(l.ms-prev[l.ddir])*time.Millisecond {
			t.Errorf("line %d: window %s + %s, want %s + %d ms", i+1, iv.Start, iv.Duration, wantStart, l.ms-prev[l.ddir])
		}
		prev[l.ddir] = l.ms
	}
}

// A think time longer than the log period makes every I/O close a logged
// window, so the log holds every I/O of the JSON: at coarseness 0 bin by
// bin, at coarseness 2 after folding the JSON's bins four by four.
func TestHistLogTotalsEqualJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	common := []string{"--rw=randread", "--number_ios=16", "--thinktime=50000", "--log_hist_msec=30"}
	args := append(fioBase(dir, "c0"), append(common, "--write_hist_log=c0", "--log_hist_coarseness=0")...)
	args = append(args, append(fioBase(dir, "c2"), append(common, "--write_hist_log=c2", "--log_hist_coarseness=2")...)...)
	args = append(args, "--output-format=json+", "--output=run.json")
	runFio(t, dir, args...)
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	ref := readReport(t, data)
	jres := run(t, JSONFormat(), "run.json", bytes.NewReader(data), time.Time{}, source.Options{})
	if jres.Err != nil {
		t.Fatal(jres.Err)
	}
	for i, tc := range []struct {
		job  string
		log  string
		cols int
	}{{"c0", "c0_clat_hist.1.log", 1856}, {"c2", "c2_clat_hist.2.log", 464}} {
		t.Run(tc.job, func(t *testing.T) {
			path := filepath.Join(dir, tc.log)
			lines := readHistLog(t, path)
			var total int64
			for _, l := range lines {
				if len(l.counts) != tc.cols {
					t.Fatalf("%d bins per line, want %d", len(l.counts), tc.cols)
				}
				total += l.total()
			}
			jh := jres.total(tc.job + " read clat")
			n := ref.Jobs[i].Read.Clat.N
			if n != 16 || total != n || jh.Count() != float64(n) {
				t.Fatalf("log total %d, JSON N %d, latscope JSON %.0f: want 16 each", total, n, jh.Count())
			}
			lres := runFile(t, HistLogFormat(), path, source.Options{})
			if lres.Err != nil || len(lres.Malformed()) > 0 {
				t.Fatalf("err %v, malformed %q", lres.Err, lres.Malformed())
			}
			lh := lres.total("read clat")
			if lh.Count() != float64(total) {
				t.Fatalf("latscope read %.0f I/Os from the log, its lines add up to %d", lh.Count(), total)
			}
			// The JSON's fine bins nest in the log's coarse ones: moving them
			// onto the coarse edges splits nothing and must give the log.
			folded := hist.RebinLike(jh, lh)
			if folded.ZeroCount != lh.ZeroCount {
				t.Errorf("zero bucket: JSON folded %g, log %g", folded.ZeroCount, lh.ZeroCount)
			}
			for b := range lh.Counts {
				if folded.Counts[b] != lh.Counts[b] {
					t.Errorf("coarse bucket %d [%g, %g): JSON folded %g, log %g", b, lh.Bounds[b], lh.Bounds[b+1], folded.Counts[b], lh.Counts[b])
				}
			}
			checkPercentiles(t, tc.log, lh, ref.Jobs[i].Read.Clat.Percentile, float64(int(1856/tc.cols)))
			checkAnchor(t, lres, path, lines)
		})
	}
}

// Two clones of a read/write job printed as normal,json+ on standard
// output: the preamble and the normal text after the JSON are skipped,
// clones (same job name) are summed, lat_percentiles adds lat series, and
// fsync latencies come as "sync lat".
func TestMixedJobsOnStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := append(fioBase(dir, "mixed"), "--rw=randrw", "--runtime=1", "--time_based", "--numjobs=2",
		"--lat_percentiles=1", "--fsync=8", "--output-format=normal,json+")
	out := runFio(t, dir, args...)
	if bytes.HasPrefix(out, []byte("{")) {
		t.Fatalf("fio printed no preamble: the test does not test it")
	}
	if v := DetectJSON(out); v != input.Yes {
		t.Fatalf("DetectJSON = %v on fio's standard output:\n%s", v, out[:min(len(out), 400)])
	}
	ref := readReport(t, out)
	res := run(t, JSONFormat(), "stdout", bytes.NewReader(out), time.Time{}, source.Options{})
	if res.Err != nil || len(res.Malformed()) > 0 {
		t.Fatalf("err %v, malformed %q", res.Err, res.Malformed())
	}
	want := map[string]int64{}
	for _, j := range ref.Jobs {
		want["mixed read clat"] += j.Read.Clat.N
		want["mixed read lat"] += j.Read.Lat.N
		want["mixed write clat"] += j.Write.Clat.N
		want["mixed write lat"] += j.Write.Lat.N
		want["mixed sync lat"] += j.Sync.Lat.N
	}
	if got := res.events(); len(got) != len(want) {
		t.Errorf("series %q, want %d", got, len(want))
	}
	for ev, n := range want {
		h := res.total(ev)
		if h == nil || n == 0 || h.Count() != float64(n) {
			t.Errorf("%s: latscope %v, fio N summed over the clones %d", ev, h, n)
		}
	}
	if len(res.Intervals) < 1 || len(res.Intervals) > 2 {
		t.Errorf("%d intervals for two clones, want 1 or 2 (one per distinct window)", len(res.Intervals))
	}
}

// group_reporting prints one entry whose job_runtime adds up the clones';
// the window is the longest direction's runtime. Plain json (without +)
// has no bins: a clear error, not an empty result.
func TestGroupReportingAndPlainJSON(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := append(fioBase(dir, "grp"), "--rw=randread", "--runtime=1", "--time_based", "--numjobs=2",
		"--group_reporting", "--output-format=json+")
	out := runFio(t, dir, args...)
	ref := readReport(t, out)
	if len(ref.Jobs) != 1 {
		t.Fatalf("group_reporting printed %d jobs", len(ref.Jobs))
	}
	res := run(t, JSONFormat(), "grp.json", bytes.NewReader(out), time.Time{}, source.Options{})
	if res.Err != nil || len(res.Intervals) != 1 {
		t.Fatalf("err %v, %d intervals", res.Err, len(res.Intervals))
	}
	rd := ref.Jobs[0].Read
	if got := res.total("grp read clat").Count(); got != float64(rd.Clat.N) || rd.Clat.N != rd.TotalIOs {
		t.Errorf("count %.0f, fio N %d total_ios %d", got, rd.Clat.N, rd.TotalIOs)
	}
	if d := res.Intervals[0].Duration; d != time.Duration(rd.Runtime)*time.Millisecond || d > 1500*time.Millisecond {
		t.Errorf("window %s, want the read runtime %d ms (not job_runtime, the clones' sum)", d, rd.Runtime)
	}

	plain := runFio(t, dir, append(fioBase(dir, "plain"), "--rw=randread", "--runtime=200ms", "--time_based",
		"--output-format=json")...)
	pres := run(t, JSONFormat(), "plain.json", bytes.NewReader(plain), time.Time{}, source.Options{})
	if !errors.Is(pres.Err, errNoBins) || len(pres.Intervals) != 0 {
		t.Errorf("plain json: err %v, %d intervals; want errNoBins", pres.Err, len(pres.Intervals))
	}
}
