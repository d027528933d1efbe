package main

// The corpus golden test: every command latscope has for files, run over
// every real input of the repository, with a digest of every output kept
// in testdata/corpus.golden. It guards refactoring (an output that changes
// by one byte fails) and shows exactly which outputs an intended change
// touches. After such a change:
//
//	go test ./cmd/latscope -run TestCorpusGolden -update
//
// and set LATSCOPE_GOLDEN_OUT=DIR to keep the outputs that differ for
// inspection.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/corpus.golden from the current outputs")

const goldenFile = "testdata/corpus.golden"

// corpusMTime is the modification time of every staged input: formats
// with time-only timestamps take the day from it.
var corpusMTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

// latencyInputs are the real latency files: the repository's test data
// and the fixtures of the source packages.
var latencyInputs = []string{
	"pylatencymap/*.txt",
	"trc10046/*/*.trc",
	"../recording/testdata/*.lsr",
	"../source/awr/testdata/*.csv", "../source/awr/testdata/*.lst",
	"../source/events/testdata/*.txt",
	"../source/fio/testdata/*.json", "../source/fio/testdata/*.log",
	"../source/hdrlog/testdata/*.hlog",
	"../source/postgres/testdata/*.log", "../source/postgres/testdata/*.csv", "../source/postgres/testdata/*.json",
	"../source/tracehist/testdata/*.txt",
}

// stackInputs are the real (and the marked synthetic) stack files.
var stackInputs = []string{
	"flamegraph/FlameGraph-test/*.txt",
	"flamegraph/example-dtrace-stacks.txt",
	"../flame/collapse/testdata/others/*.txt",
	"../flame/filter/testdata/*.folded",
}

// corpusRun is one command over staged inputs; outs are the files it
// writes (with -o), digested beside stdout and stderr.
type corpusRun struct {
	key  string
	args []string
	outs []string
}

func TestCorpusGolden(t *testing.T) {
	work := t.TempDir()
	latency := stageCorpus(t, work, latencyInputs)
	stacks := stageCorpus(t, work, stackInputs)
	if len(latency) < 40 || len(stacks) < 20 {
		t.Fatalf("corpus: %d latency and %d stack inputs", len(latency), len(stacks))
	}
	var runs []corpusRun
	for _, in := range latency {
		runs = append(runs, latencyRuns(in)...)
	}
	runs = append(runs, multiRuns(latency)...)
	for _, in := range stacks {
		runs = append(runs, stackRuns(in)...)
	}
	runs = append(runs, corpusRun{key: "formats", args: []string{"formats"}}, corpusRun{key: "sources", args: []string{"sources"}})

	golden, err := filepath.Abs(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	got := map[string]string{}
	outputs := map[string][]byte{}
	for _, r := range runs {
		if os.Getenv("LATSCOPE_GOLDEN_TRACE") != "" {
			fmt.Fprintln(os.Stderr, r.key)
		}
		for name, data := range runCorpus(t, r) {
			key := r.key + " " + name
			got[key] = digest(data)
			outputs[key] = data
		}
	}
	compareGolden(t, golden, got, outputs)
}

// stageCorpus copies the inputs matching the patterns (relative to the
// repository's testdata) into work/in, under their paths relative to it,
// with a fixed modification time, and returns their staged names.
func stageCorpus(t *testing.T, work string, patterns []string) []string {
	t.Helper()
	var names []string
	for _, pattern := range patterns {
		for _, rel := range corpusFiles(t, pattern) {
			name := filepath.ToSlash(filepath.Join("in", strings.TrimPrefix(rel, "../")))
			dst := filepath.Join(work, name)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(corpusPath(t, rel))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(dst, corpusMTime, corpusMTime); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return slices.Compact(names)
}

// corpusFiles lists a pattern's files: package fixtures by glob, the
// repository's real data through testenv (shared-only files when present).
func corpusFiles(t *testing.T, pattern string) []string {
	if !strings.HasPrefix(pattern, "../") {
		return testenv.DataFiles(t, pattern)
	}
	paths, err := filepath.Glob(filepath.Join(testenv.DataDir(t), pattern))
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, p := range paths {
		rel, _ := filepath.Rel(testenv.DataDir(t), p)
		rels = append(rels, filepath.ToSlash(rel))
	}
	return rels
}

func corpusPath(t *testing.T, rel string) string {
	if strings.HasPrefix(rel, "../") {
		return filepath.Join(testenv.DataDir(t), rel)
	}
	return testenv.DataFile(t, rel)
}

// latencyRuns are the commands for one latency input: every report and
// heat-map format, every image, a recording and every convert sink.
func latencyRuns(in string) []corpusRun {
	tz := []string{"--tz", "UTC"}
	cmd := func(key string, args ...string) corpusRun {
		return corpusRun{key: in + " " + key, args: append(append(args[:1:1], in), append(tz, args[1:]...)...)}
	}
	out := func(key, file string, args ...string) corpusRun {
		r := cmd(key, append(args, "-o", file)...)
		r.outs = []string{file}
		return r
	}
	runs := []corpusRun{
		cmd("report", "report"),
		cmd("report-intervals", "report", "--intervals"),
		cmd("report-json", "report", "--format", "json"),
		cmd("report-csv", "report", "--format", "csv"),
		cmd("heatmap-once", "heatmap", "--once", "--plain"),
		cmd("heatmap-once-log-intensity", "heatmap", "--once", "--plain", "--scale", "log", "--show", "intensity"),
		cmd("heatmap-json", "heatmap", "--format", "json"),
		cmd("heatmap-csv", "heatmap", "--format", "csv"),
		out("heatmap-html", "out.html", "heatmap"),
		out("heatmap-svg", "out.svg", "heatmap"),
		out("heatmap-png", "out.png", "heatmap"),
		out("report-o-json", "out.json", "report"),
		out("record", "out.lsr", "record"),
	}
	for _, sink := range []string{"pylatencymap", "hdrlog", "jsonl", "prometheus", "csv"} {
		runs = append(runs, cmd("convert-"+sink, "convert", "--to", sink))
	}
	return runs
}

// multiRuns merge several inputs: summed, and kept apart by file.
func multiRuns(latency []string) []corpusRun {
	var pyl, traces, rac []string
	for _, in := range latency {
		switch {
		case strings.HasPrefix(in, "in/pylatencymap/"):
			pyl = append(pyl, in)
		case strings.HasPrefix(in, "in/trc10046/apress-"):
			// shared-only: its own runs are checked where present, but
			// it must not change the merged runs on a clone.
		case strings.HasPrefix(in, "in/trc10046/"):
			traces = append(traces, in)
			if strings.Contains(in, "/jkstill-") {
				rac = append(rac, in) // one RAC database, one morning
			}
		}
	}
	runs := []corpusRun{
		{key: "pylatencymap-all report-json", args: append(append([]string{"report"}, pyl...), "--tz", "UTC", "--format", "json")},
		{key: "pylatencymap-all by-file report-csv", args: append(append([]string{"report"}, pyl...), "--tz", "UTC", "--by", "file", "--format", "csv")},
		{key: "trc10046-all report-json", args: append(append([]string{"report"}, traces...), "--tz", "UTC", "--format", "json")},
		{key: "trc10046-rac by-file heatmap-json interval-10s", args: append(append([]string{"heatmap"}, rac...), "--tz", "UTC", "--by", "file", "--interval", "10s", "--format", "json")},
	}
	return append(runs, rowsPerOctaveRuns(rac[0], pyl[0])...)
}

// rowsPerOctaveRuns split a trace's octaves into quarters (exact ela
// values), and ask the same of Oracle's power-of-two buckets, which stay
// per octave with a notice.
func rowsPerOctaveRuns(trace, buckets string) []corpusRun {
	rows := []string{"--tz", "UTC", "--rows-per-octave", "4"}
	heatmap := func(in string, args ...string) []string {
		return append(append([]string{"heatmap", in}, rows...), args...)
	}
	return []corpusRun{
		{key: trace + " heatmap-once rows-per-octave-4", args: heatmap(trace, "--once", "--plain")},
		{key: trace + " heatmap-json rows-per-octave-4", args: heatmap(trace, "--format", "json")},
		{key: trace + " heatmap-svg rows-per-octave-4 log", args: heatmap(trace, "--scale", "log", "-o", "out.svg"), outs: []string{"out.svg"}},
		{key: buckets + " heatmap-once rows-per-octave-4", args: heatmap(buckets, "--once", "--plain")},
	}
}

// stackRuns are the commands for one stack input: folded, JSON, SVG,
// HTML and pprof (bare protobuf: no compressor's bytes in the golden), with perf's --all, a database decoding and the filters on some.
func stackRuns(in string) []corpusRun {
	cmd := func(key string, args ...string) corpusRun {
		return corpusRun{key: in + " " + key, args: append(append(args[:1:1], in), args[1:]...)}
	}
	out := func(key, file string, args ...string) corpusRun {
		r := cmd(key, append(args, "-o", file)...)
		r.outs = []string{file}
		return r
	}
	runs := []corpusRun{
		cmd("collapse", "collapse"),
		cmd("flame-json", "flame", "--format", "json"),
		out("flame-svg", "out.svg", "flame"),
		out("flame-html", "out.html", "flame"),
		out("collapse-pprof", "out.pb", "collapse"),
	}
	base := filepath.Base(in)
	switch {
	case strings.HasPrefix(base, "perf-"):
		runs = append(runs, cmd("collapse-all", "collapse", "--all"))
	case strings.Contains(base, "oracle"):
		runs = append(runs, out("flame-oracle-plan-svg", "out.svg", "flame", "--db", "oracle", "--view", "plan"),
			out("flame-oracle-layers-html", "out.html", "flame", "--db", "oracle", "--view", "plan+layers"))
	}
	if base == "perf-vertx-stacks-01.txt" {
		runs = append(runs,
			cmd("collapse-include", "collapse", "--include", "java"),
			cmd("collapse-exclude", "collapse", "--exclude", "^swapper"),
			cmd("collapse-focus", "collapse", "--focus", "java"),
			cmd("collapse-skip-after", "collapse", "--skip-after", "start_thread"),
			out("flame-inverted-svg", "out.svg", "flame", "--inverted", "--colors", "java", "--title", "t"),
			out("flame-flamechart-svg", "out.svg", "flame", "--flamechart", "--minwidth", "1%"))
	}
	return runs
}

// runCorpus runs one command in this process and returns its outputs by
// name: stdout, stderr (with the exit status) and every -o file.
func runCorpus(t *testing.T, r corpusRun) map[string][]byte {
	t.Helper()
	for _, f := range r.outs {
		os.Remove(f)
	}
	var stdout, stderr bytes.Buffer
	env := environment{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr}
	cmd := newRootCommand(env)
	cmd.SetArgs(r.args)
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	err := cmd.ExecuteContext(context.Background())
	fmt.Fprintf(&stderr, "[exit %d]\n", exitCode(context.Background(), err))
	got := map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()}
	for _, f := range r.outs {
		data, err := os.ReadFile(f)
		if err != nil {
			data = []byte("(not written)")
		}
		got[f] = data
	}
	return got
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return fmt.Sprintf("%s %d", hex.EncodeToString(sum[:16]), len(data))
}

// compareGolden checks the digests against the golden file, or rewrites it
// with -update. Entries whose input is absent (shared-only data on a clone)
// are kept and not checked.
func compareGolden(t *testing.T, golden string, got map[string]string, outputs map[string][]byte) {
	t.Helper()
	want := readGolden(t, golden)
	if *updateGolden {
		for k, v := range got {
			want[k] = v
		}
		for k := range want {
			if _, ok := got[k]; !ok && inputPresent(k) {
				delete(want, k) // a run that no longer exists
			}
		}
		writeGolden(t, golden, want)
		return
	}
	var diff []string
	for k, v := range got {
		if want[k] != v {
			diff = append(diff, fmt.Sprintf("%s: %s, golden %q", k, v, want[k]))
			keepOutput(t, k, outputs[k])
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok && inputPresent(k) {
			diff = append(diff, k+": no longer produced")
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Errorf("%d of %d outputs differ from %s (LATSCOPE_GOLDEN_OUT=DIR keeps them; -update rewrites the file after an intended change):\n%s",
			len(diff), len(got), goldenFile, strings.Join(diff[:min(len(diff), 40)], "\n"))
	}
}

// inputPresent reports whether a golden key's input was staged this run
// (the first field of a per-input key is its staged path, relative to the
// test's working directory).
func inputPresent(key string) bool {
	in, _, _ := strings.Cut(key, " ")
	if !strings.HasPrefix(in, "in/") {
		return true
	}
	_, err := os.Stat(in)
	return err == nil
}

func keepOutput(t *testing.T, key string, data []byte) {
	dir := os.Getenv("LATSCOPE_GOLDEN_OUT")
	if dir == "" {
		return
	}
	name := strings.NewReplacer("/", "_", " ", "__").Replace(key)
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Log(err)
	}
}

func readGolden(t *testing.T, path string) map[string]string {
	t.Helper()
	want := map[string]string{}
	f, err := os.Open(path)
	if os.IsNotExist(err) && *updateGolden {
		return want
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// "hash size key..."
		fields := strings.SplitN(line, " ", 3)
		if len(fields) != 3 {
			t.Fatalf("%s: bad line %q", goldenFile, line)
		}
		want[fields[2]] = fields[0] + " " + fields[1]
	}
	if err := sc.Err(); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return want
}

func writeGolden(t *testing.T, path string, entries map[string]string) {
	t.Helper()
	keys := make([]string, 0, len(entries))
	for k := range entries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# Digests (first 128 bits of SHA-256, then the size) of every output of TestCorpusGolden.\n")
	b.WriteString("# Regenerate after an intended output change: go test ./cmd/latscope -run TestCorpusGolden -update\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %s\n", entries[k], k)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
