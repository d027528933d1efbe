package oracle10046

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// parsed is everything one parse of an input produced.
type parsed struct {
	intervals []stream.Interval
	blocks    []stream.BlockRead
	log       string
	problems  []input.SourceProblems
	warnings  []string
	err       error
}

// parseWith parses data sequentially (chunk 0) or in parallel chunks of
// chunk bytes scanned by workers.
func parseWith(data []byte, opts source.Options, chunk, workers int) parsed {
	var out parsed
	log := &bytes.Buffer{}
	diag := input.NewDiagnostics(log, 1000)
	in := source.Input{Name: "t.trc", Reader: bytes.NewReader(data), Diag: diag}
	if opts.BlockReads != nil {
		opts.BlockReads = func(r stream.BlockRead) { out.blocks = append(out.blocks, r) }
	}
	p := newParser(in, opts, func(iv stream.Interval) error {
		out.intervals = append(out.intervals, iv)
		return nil
	})
	if chunk == 0 {
		out.err = p.run(context.Background(), in.Reader)
	} else {
		out.err = p.runParallel(context.Background(), bytes.NewReader(data), int64(len(data)), workers, chunk)
	}
	out.log, out.problems, out.warnings = log.String(), diag.Problems(), diag.Warnings()
	return out
}

// sameParse fails unless the parallel parse of data in chunks of chunk
// bytes gives exactly what the sequential parse gives.
func sameParse(t *testing.T, what string, data []byte, opts source.Options, chunk, workers int) {
	t.Helper()
	want := parseWith(data, opts, 0, 0)
	got := parseWith(data, opts, chunk, workers)
	if fmt.Sprint(got.err) != fmt.Sprint(want.err) {
		t.Fatalf("%s, chunk %d: error %v, sequential %v", what, chunk, got.err, want.err)
	}
	if !reflect.DeepEqual(got.intervals, want.intervals) {
		t.Fatalf("%s, chunk %d: intervals differ\nparallel:\n%s\nsequential:\n%s", what, chunk,
			describe(got.intervals), describe(want.intervals))
	}
	if !reflect.DeepEqual(got.blocks, want.blocks) {
		t.Fatalf("%s, chunk %d: %d block reads, sequential %d (or in another order)", what, chunk, len(got.blocks), len(want.blocks))
	}
	if got.log != want.log || !reflect.DeepEqual(got.problems, want.problems) || !reflect.DeepEqual(got.warnings, want.warnings) {
		t.Fatalf("%s, chunk %d: diagnostics differ\nparallel:\n%s%v\nsequential:\n%s%v", what, chunk,
			got.log, got.warnings, want.log, want.warnings)
	}
}

// parallelOptions are the option sets whose state the replay must carry:
// plain waits, calls as series (by type with CPU, by statement), block
// reads and a short interval.
func parallelOptions() map[string]source.Options {
	blocks := func(stream.BlockRead) {}
	return map[string]source.Options{
		"waits":      {Location: time.UTC},
		"calls-type": {Location: time.UTC, Calls: source.CallsByType, CallCPU: true},
		"calls-sql":  {Location: time.UTC, Calls: source.CallsBySQL, BlockReads: blocks},
		"blocks-1s":  {Location: time.UTC, Interval: time.Second, BlockReads: blocks},
	}
}

// TestParallelParseEqualsSequential parses every real trace, their
// concatenation and repetitions in chunks small enough that boundaries
// fall everywhere (inside SQL text, binds, between a timestamp and its
// tim), and compares with the sequential parse.
func TestParallelParseEqualsSequential(t *testing.T) {
	var all [][]byte
	for _, rel := range allTraces(t) {
		all = append(all, readShared(t, rel))
	}
	inputs := map[string][]byte{"all traces concatenated": bytes.Join(all, nil)}
	for i, rel := range allTraces(t) {
		inputs[rel] = all[i]
		inputs[rel+" x3"] = bytes.Repeat(all[i], 3)
	}
	for name, opts := range parallelOptions() {
		t.Run(name, func(t *testing.T) {
			for what, data := range inputs {
				for _, chunk := range []int{4 << 10, 1000 + 3, 64 << 10} {
					sameParse(t, what, data, opts, chunk, 2)
				}
			}
		})
	}
}

// TestParallelParseEdges covers what real traces lack: lines longer than
// maxLineLen (inside and outside SQL text, in a chunk and across chunks),
// a byte order mark, CRLF, a last line without newline, one-byte chunks.
func TestParallelParseEdges(t *testing.T) {
	long := strings.Repeat("x", maxLineLen+10)
	exact := strings.Repeat("y", maxLineLen)
	head := "\xef\xbb\xbfWAIT #1: nam='a' ela= 5 tim=100\r\n*** 2024-01-02 03:04:05.678\n"
	cases := map[string]string{
		"long wait":       head + "WAIT #1: nam='b' ela= 7 p=" + long + " tim=200\nWAIT #1: nam='a' ela= 9 tim=300\n",
		"exact line":      head + exact + "\nWAIT #1: nam='a' ela= 9 tim=300\n" + exact,
		"long sql":        head + "PARSING IN CURSOR #2 len=40 dep=0 tim=150\nselect\n" + long + "\nEND OF STMT\nWAIT #2: nam='c' ela= 3 tim=400\n",
		"sql to the end":  head + "PARSING IN CURSOR #2 len=4000000 dep=0 tim=150\n  a\n" + long + "\n WAIT #2: nam='c' ela= 3 tim=400",
		"parse error":     head + "PARSE ERROR #3:len=12 dep=0 uid=1 oct=3 lid=1 tim=170 err=900\nWAIT x\n ab\nWAIT #2: nam='c' ela= 3 tim=400\n",
		"no last newline": head + "WAIT #1: nam='a' ela= 5 tim=500",
		// The worker follows SQL text after a line the replay reads
		// from its records (no timestamp pending): a PARSE ERROR's text
		// ends at len-2 bytes, a statement at END OF STMT.
		"parse error len": head + "WAIT #1: nam='a' ela= 6 tim=160\nPARSE ERROR #3:len=9 dep=0 uid=1 oct=3 lid=1 tim=170 err=900\nWAIT x\nWAIT #2: nam='d' ela= 1 tim=450\n",
		"statement":       head + "WAIT #1: nam='a' ela= 6 tim=160\nPARSING IN CURSOR #2 len=6 dep=0 tim=170\nWAIT #2: nam='e' ela= 2 tim=180\nEND OF STMT\r\nWAIT #2: nam='c' ela= x tim=400\nWAIT #2: nam='c' ela= 3 tim=410\n",
		"long last line":  head + "WAIT #1: nam='a' ela= 5 tim=500\n" + long,
	}
	for name, text := range cases {
		for _, chunk := range []int{1, 7, 4 << 10, 8 << 20} {
			for _, opts := range parallelOptions() {
				sameParse(t, name, []byte(text), opts, chunk, 3)
			}
		}
	}
}

// TestParallelParseUsed checks that Open parses a large regular file in
// parallel, and a pipe or --follow sequentially.
func TestParallelParseUsed(t *testing.T) {
	in := source.Input{At: strings.NewReader(""), Size: parallelMinSize}
	if got, procs := parallelWorkers(in, source.Options{}), runtime.GOMAXPROCS(0); procs >= 2 && got != procs {
		t.Errorf("a large file is parsed by %d workers, want %d", got, procs)
	}
	if parallelWorkers(source.Input{}, source.Options{}) != 0 {
		t.Error("an input of unknown size is parsed in parallel")
	}
	if parallelWorkers(in, source.Options{Follow: true}) != 0 {
		t.Error("--follow is parsed in parallel")
	}
	if parallelWorkers(source.Input{Size: parallelMinSize}, source.Options{}) != 0 {
		t.Error("a file without random access (compressed) is parsed in parallel")
	}
	if parallelWorkers(source.Input{At: in.At, Size: parallelMinSize - 1}, source.Options{}) != 0 {
		t.Error("a small file is parsed in parallel")
	}
}

// FuzzParallelParse compares the parallel parse in tiny chunks with the
// sequential parse on arbitrary input.
func FuzzParallelParse(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s, uint8(5), false)
		f.Add(s, uint8(64), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8, calls bool) {
		opts := source.Options{Location: time.UTC, BlockReads: func(stream.BlockRead) {}}
		if calls {
			opts.Calls, opts.CallCPU = source.CallsBySQL, true
		}
		sameParse(t, "fuzz", data, opts, 1+int(chunk), 2)
	})
}

// TestParallelParseStops checks that an error of the sink, a read error
// and a cancelled context end the parallel parse (with every goroutine)
// as they end the sequential one.
func TestParallelParseStops(t *testing.T) {
	data := bytes.Repeat(readShared(t, fileTrcsess), 4)
	stop := errors.New("sink full")
	in := source.Input{Name: "t.trc", Reader: bytes.NewReader(data)}
	p := newParser(in, source.Options{Interval: time.Second}, func(stream.Interval) error { return stop })
	size := int64(len(data))
	if err := p.runParallel(context.Background(), bytes.NewReader(data), size, 2, 4<<10); !errors.Is(err, stop) {
		t.Errorf("sink error: got %v", err)
	}
	broken := brokenAt{bytes.NewReader(data), size / 2}
	p = newParser(source.Input{Name: "t.trc"}, source.Options{}, func(stream.Interval) error { return nil })
	if err := p.runParallel(context.Background(), broken, size, 2, 4<<10); err == nil || !strings.Contains(err.Error(), "disk gone") {
		t.Errorf("read error: got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p = newParser(in, source.Options{}, func(stream.Interval) error { return nil })
	if err := p.runParallel(ctx, bytes.NewReader(data), size, 2, 4<<10); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
}

// brokenAt fails reads past a point, like a disk that goes away.
type brokenAt struct {
	r    io.ReaderAt
	good int64
}

func (b brokenAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > b.good {
		return 0, errors.New("disk gone")
	}
	return b.r.ReadAt(p, off)
}

// TestParallelParseFileShrank checks that a file shorter than its measured
// size (truncated while read) parses as what is left, without a panic.
func TestParallelParseFileShrank(t *testing.T) {
	data := readShared(t, fileTrcsess)
	want := parseWith(data, source.Options{}, 0, 0)
	for _, chunk := range []int{1000, 4 << 10} {
		in := source.Input{Name: "t.trc", Diag: input.NewDiagnostics(io.Discard, 1000)}
		var got []stream.Interval
		p := newParser(in, source.Options{}, func(iv stream.Interval) error {
			got = append(got, iv)
			return nil
		})
		if err := p.runParallel(context.Background(), bytes.NewReader(data), int64(len(data)+5*chunk), 2, chunk); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want.intervals) {
			t.Errorf("chunk %d: %d intervals, want %d as parsed sequentially", chunk, len(got), len(want.intervals))
		}
	}
}
