package oracle10046

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// Every real trace is recognised from its first lines, and so is a
// header-less piece of one; PyLatencyMap records and other text are not.
func TestDetect(t *testing.T) {
	for _, rel := range allTraces(t) {
		data := readShared(t, rel)
		if got := detectGrowing(data); got != input.Yes {
			t.Errorf("%s: %v, want Yes", rel, got)
		}
		// A header-less piece starting at the first call or wait.
		for _, marker := range []string{"\nWAIT #", "\nEXEC #", "\nPARSING IN CURSOR #"} {
			if i := bytes.Index(data, []byte(marker)); i >= 0 {
				if got := Detect(data[i+1:]); got != input.Yes {
					t.Errorf("%s from %q: %v, want Yes", rel, marker, got)
				}
			}
		}
	}
	pyl := readShared(t, "pylatencymap/example_latency_data.txt")
	if got := detectGrowing(pyl); got != input.No {
		t.Errorf("PyLatencyMap records: %v, want No", got)
	}
	sqlplus := "\nSQL*Plus: Release 11.2.0.3.0 Production on Mon Aug 26 16:26:48 2013\n\n" +
		"Copyright (c) 1982, 2011, Oracle.  All rights reserved.\n\n\nConnected to:\n" +
		"Oracle Database 11g Enterprise Edition Release 11.2.0.3.0 - 64bit Production\n\n"
	if got := detectGrowing(append([]byte(sqlplus), pyl...)); got != input.No {
		t.Errorf("PyLatencyMap records after a SQL*Plus banner: %v, want No", got)
	}
	cases := map[string]input.Verdict{
		"":                                   input.NeedMore,
		"Trace fi":                           input.NeedMore,
		"<begin record>\nWAIT #1: nam='x'":   input.No,
		"\xef\xbb\xbfTrace file /x.trc\n":    input.Yes,
		"EXEC #140:c=0,e=1,p=0,tim=1\n":      input.Yes,
		"EXEC #140 is not a call\n":          input.NeedMore,
		strings.Repeat("hello world\n", 400): input.No,
	}
	for in, want := range cases {
		if got := Detect([]byte(in)); got != want {
			t.Errorf("Detect(%.30q) = %v, want %v", in, got, want)
		}
	}
}

// detectGrowing offers growing prefixes the way source.Opener does.
func detectGrowing(data []byte) input.Verdict {
	for n := 1; n <= len(data) && n <= 64<<10; n++ {
		if v := Detect(data[:n]); v != input.NeedMore {
			return v
		}
	}
	return input.NeedMore
}

// The opener picks this format for a real trace, here one without a
// "Trace file" header (a trcsess merge starts with its first section).
func TestOpenerRecognisesTraces(t *testing.T) {
	o := &source.Opener{Formats: []source.Format{Format()}}
	src, err := o.Open(context.Background(), "/nonexistent/"+t.Name())
	if err == nil {
		t.Fatalf("opened a missing file: %v", src)
	}
	path := testenv.DataFile(t, fileTrcsess)
	src, err = o.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := src.Run(context.Background(), func(stream.Interval) error { n++; return nil }); err != nil || n == 0 {
		t.Errorf("Run: %v, %d intervals", err, n)
	}
}

// A cancelled context stops the read with its error; an emit error stops it
// with that error.
func TestRunStopsOnCancelAndEmitError(t *testing.T) {
	data := bytes.Repeat(readShared(t, file9850), 4)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src, _ := Open(source.Input{Name: "x", Reader: bytes.NewReader(data)}, source.Options{})
	if err := src.Run(ctx, func(stream.Interval) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Run: %v", err)
	}
	stop := errors.New("enough")
	src, _ = Open(source.Input{Name: "x", Reader: bytes.NewReader(data)}, source.Options{})
	calls := 0
	err := src.Run(context.Background(), func(stream.Interval) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Run after emit error: %v after %d calls", err, calls)
	}
	src, _ = Open(source.Input{Name: "x", Reader: io.MultiReader(bytes.NewReader(data[:1000]), failingReader{})}, source.Options{})
	if err := src.Run(context.Background(), func(stream.Interval) error { return nil }); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("Run on a failing reader: %v", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

// repeatReader yields data n times without ever holding more than one copy.
type repeatReader struct {
	data []byte
	n    int
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	c := copy(p, r.data[r.off:])
	r.off += c
	if r.off == len(r.data) {
		r.off = 0
		r.n--
	}
	return c, nil
}

// Streaming: reading the 12.2 trace over and over (about 384 MB, generated
// on the fly) keeps the heap small; intervals are emitted as the read goes.
func TestMemoryDoesNotGrowWithFileSize(t *testing.T) {
	data := readShared(t, file9850)
	size := 384 << 20
	if testing.Short() {
		size /= 10
	}
	copies := size / len(data)
	src, _ := Open(source.Input{Name: "big", Reader: &repeatReader{data: data, n: copies}}, source.Options{})
	var waits float64
	var peak uint64
	intervals := 0
	var ms runtime.MemStats
	err := src.Run(context.Background(), func(iv stream.Interval) error {
		intervals++
		for _, s := range iv.Series {
			waits += s.Hist.Count()
		}
		if intervals%200 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapInuse)
	if want := float64(waits9850 * copies); waits != want {
		t.Errorf("%g waits, want %g", waits, want)
	}
	if peak > 30<<20 {
		t.Errorf("heap in use reached %d MB reading %d MB", peak>>20, copies*len(data)>>20)
	}
	t.Logf("%d MB read, %d intervals, peak heap in use %.1f MB", copies*len(data)>>20, intervals, float64(peak)/(1<<20))
}
