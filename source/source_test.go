package source_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/lsr"
	"github.com/latscope/latscope/source/oracle10046"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

func opener(diag *input.Diagnostics) *source.Opener {
	return &source.Opener{
		Formats: []source.Format{lsr.Format(), pylatencymap.Format(), oracle10046.Format()},
		Diag:    diag,
	}
}

// collect runs a source to the end.
func collect(t *testing.T, src source.Source) []stream.Interval {
	t.Helper()
	var out []stream.Interval
	if err := src.Run(context.Background(), func(iv stream.Interval) error {
		out = append(out, iv)
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", src.Name(), err)
	}
	return out
}

func TestOpenerDetectsEveryRealFile(t *testing.T) {
	cases := map[string]int{
		"pylatencymap/example_latency_data.txt":                           71,
		"pylatencymap/calibration_data.txt":                               2,
		"trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc":    1,
		"trc10046/carymillsap-tracing-oracle_23.2/FREE_ora_39079.trc":     1,
		"trc10046/jkstill-trace-combine_12.2.0.1/main_trcsess_output.trc": 1,
		"trc10046/priitp2-trctools_19.x/lobs.trc":                         0,
	}
	for rel, minIntervals := range cases {
		src, err := opener(nil).Open(context.Background(), testenv.DataFile(t, rel))
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if n := len(collect(t, src)); n < minIntervals {
			t.Errorf("%s: %d intervals, want at least %d", rel, n, minIntervals)
		}
	}
}

func TestOpenerUnwrapsGzip(t *testing.T) {
	data, err := os.ReadFile(testenv.DataFile(t, "pylatencymap/example_latency_data.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	zw.Close()
	p := filepath.Join(t.TempDir(), "x.txt.gz")
	os.WriteFile(p, buf.Bytes(), 0o644)
	src, err := opener(nil).Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(collect(t, src)); n != 71 {
		t.Errorf("%d intervals from the gzipped file, want 71", n)
	}
}

func TestOpenerNamesTheFormatsItTried(t *testing.T) {
	p := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(p, []byte("just some notes\nnothing to see\n"), 0o644)
	_, err := opener(nil).Open(context.Background(), p)
	if !errors.Is(err, source.ErrUnknownFormat) || !strings.Contains(err.Error(), "notes.txt") ||
		!strings.Contains(err.Error(), "latscope, pylatencymap, oracle-10046") {
		t.Errorf("error %v", err)
	}
	o := opener(nil)
	o.Options.Format = "nope"
	if _, err := o.Open(context.Background(), p); err == nil || !strings.Contains(err.Error(), "known: latscope") {
		t.Errorf("unknown --input-format: %v", err)
	}
}

func TestOpenerEmptyAndBlankInputAreEmptySources(t *testing.T) {
	for _, content := range []string{"", "\n\n  \n"} {
		p := filepath.Join(t.TempDir(), "empty")
		os.WriteFile(p, []byte(content), 0o644)
		src, err := opener(nil).Open(context.Background(), p)
		if err != nil {
			t.Fatalf("%q: %v", content, err)
		}
		if n := len(collect(t, src)); n != 0 {
			t.Errorf("%q: %d intervals", content, n)
		}
	}
}

func TestOpenerRejectsDirectoriesAndMissingFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := opener(nil).Open(context.Background(), dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := opener(nil).Open(context.Background(), filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestOpenerDetectsASlowPipeFromItsFirstLines(t *testing.T) {
	// A live pipe (sqlplus | latscope) must be recognised as soon as its
	// first record arrives, not after 64 KiB or EOF.
	data, err := os.ReadFile(testenv.DataFile(t, "pylatencymap/example_latency_data.txt"))
	if err != nil {
		t.Fatal(err)
	}
	first := data[:bytes.Index(data, []byte("<end record>"))+len("<end record>\n")]
	pr, pw := io.Pipe()
	go pw.Write(first)
	o := opener(nil)
	o.Stdin = pr
	done := make(chan error, 1)
	go func() {
		_, err := o.Open(context.Background(), "-")
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("detection waited for more input than the first record")
	}
	pw.Close()
}

func TestFollowReaderRestartsAfterTruncation(t *testing.T) {
	data, err := os.ReadFile(testenv.DataFile(t, "pylatencymap/example_latency_data.txt"))
	if err != nil {
		t.Fatal(err)
	}
	recs := strings.SplitAfter(string(data), "<end record>")
	p := filepath.Join(t.TempDir(), "live.txt")
	// Each piece ends at "<end record>"; the newline that completes the
	// line starts the next piece, so add it.
	os.WriteFile(p, []byte(recs[0]+recs[1]+recs[2]+"\n"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o := opener(nil)
	o.Options.Follow = true
	src, err := o.Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan stream.Interval, 100)
	go src.Run(ctx, func(iv stream.Interval) error { got <- iv; return nil })
	waitFor := func(n int) {
		for i := 0; i < n; i++ {
			select {
			case <-got:
			case <-time.After(5 * time.Second):
				t.Fatalf("interval %d of %d did not arrive", i+1, n)
			}
		}
	}
	waitFor(2)
	// Truncated in place, then written again from the top.
	os.WriteFile(p, nil, 0o644)
	time.Sleep(500 * time.Millisecond)
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(recs[3] + recs[4] + recs[5] + "\n")
	f.Close()
	waitFor(3)
	// Rotated by rename: a new file under the same name.
	os.Rename(p, p+".1")
	os.WriteFile(p, []byte(recs[6]+recs[7]+"\n"), 0o644)
	waitFor(2)
}

func TestDiagnosticsPrintsTheFirstProblemsAndCountsAll(t *testing.T) {
	var out bytes.Buffer
	d := input.NewDiagnostics(&out, 2)
	for i := 1; i <= 5; i++ {
		d.Malformed("a.trc", i*10, "bad ela")
	}
	d.MalformedAt("iotest:/x", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "read failed")
	d.Warn("a.trc", "time goes backwards at line %d", 7)
	d.Warn("a.trc", "time goes backwards at line %d", 7)
	if got := strings.Count(out.String(), "skipped a.trc:"); got != 2 {
		t.Errorf("printed %d problems of a.trc, want 2:\n%s", got, out.String())
	}
	if !strings.Contains(out.String(), "a.trc:10: bad ela") || !strings.Contains(out.String(), "iotest:/x at 2026-01-02T03:04:05Z: read failed") {
		t.Errorf("output:\n%s", out.String())
	}
	if strings.Count(out.String(), "time goes backwards") != 1 {
		t.Error("repeated warning printed twice")
	}
	if d.Count("a.trc") != 5 {
		t.Errorf("count %d, want 5", d.Count("a.trc"))
	}
	var sum bytes.Buffer
	d.PrintSummary(&sum)
	if !strings.Contains(sum.String(), "a.trc: 5 malformed line(s) skipped (first 2 shown above)") {
		t.Errorf("summary %q", sum.String())
	}
}

// fakeSource emits fixed intervals then an optional error: a stand-in for a
// source, since RunAll's job (fan-in, validation, --by file) is independent
// of any format.
type fakeSource struct {
	name string
	ivs  []stream.Interval
	err  error
}

func (f fakeSource) Name() string { return f.name }
func (f fakeSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	for _, iv := range f.ivs {
		if err := emit(iv); err != nil {
			return err
		}
	}
	return f.err
}

func TestRunAllMergesValidatesAndKeepsFilesApart(t *testing.T) {
	t0 := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	mk := func(src string, d time.Duration) stream.Interval {
		h := hist.NewExact(hist.Microsecond, 0)
		h.Record(5)
		return stream.Interval{Source: src, Start: t0, Duration: d, Series: []stream.SeriesHist{{Key: stream.Key{Event: "e"}, Hist: h}}}
	}
	srcs := []source.Source{
		fakeSource{name: "a", ivs: []stream.Interval{mk("a", time.Second), mk("a", 0)}},
		fakeSource{name: "b", ivs: []stream.Interval{mk("b", time.Second)}, err: errors.New("b:12: broken")},
	}
	var warn bytes.Buffer
	diag := input.NewDiagnostics(&warn, 5)
	var got []stream.Interval
	err := source.RunAll(context.Background(), srcs, true, diag, func(iv stream.Interval) error {
		got = append(got, iv)
		return nil
	})
	if err == nil || err.Error() != "b:12: broken" {
		t.Errorf("error %v, want the source's own file:line message once", err)
	}
	if len(got) != 2 {
		t.Fatalf("%d intervals, want 2 (the zero-length one dropped)", len(got))
	}
	for _, iv := range got {
		if iv.Series[0].Key.Source != iv.Source {
			t.Errorf("--by file: key source %q, interval source %q", iv.Series[0].Key.Source, iv.Source)
		}
	}
	if !strings.Contains(warn.String(), "dropped an interval") {
		t.Errorf("invalid interval not reported: %q", warn.String())
	}
}

// linkLog records a Link's calls.
type linkLog []string

func (l *linkLog) Lost(_ time.Time, err error) { *l = append(*l, "lost: "+err.Error()) }
func (l *linkLog) Restored(time.Time)          { *l = append(*l, "restored") }

func TestLinkWatchReportsRestoreOnlyAfterLoss(t *testing.T) {
	var got linkLog
	w := source.NewLinkWatch(&got)
	w.Reached() // the first connection: nothing was lost
	w.Lost(errors.New("a"))
	w.Lost(errors.New("b"))
	w.Reached()
	w.Reached()
	want := linkLog{"lost: a", "lost: b", "restored"}
	if !slices.Equal(got, want) {
		t.Errorf("calls %q, want %q", got, want)
	}
	source.NewLinkWatch(nil).Lost(errors.New("nobody listens")) // no panic
}

// TestOpenerGivesRandomAccessToPlainFilesOnly checks Input.At and Size,
// which let a parser read a file in parallel chunks: set for a regular
// uncompressed file, not for a gzip file or stdin.
func TestOpenerGivesRandomAccessToPlainFilesOnly(t *testing.T) {
	var got source.Input
	capture := source.Format{Name: "capture", Open: func(in source.Input, _ source.Options) (source.Source, error) {
		got = in
		return nil, errors.New("captured")
	}}
	o := &source.Opener{Formats: []source.Format{capture}, Options: source.Options{Format: "capture"}, Stdin: strings.NewReader("x\n")}
	dir := t.TempDir()
	plain := filepath.Join(dir, "t.trc")
	os.WriteFile(plain, []byte("WAIT #1: nam='a' ela= 1 tim=2\n"), 0o644)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("WAIT #1: nam='a' ela= 1 tim=2\n"))
	zw.Close()
	packed := filepath.Join(dir, "t.trc.gz")
	os.WriteFile(packed, gz.Bytes(), 0o644)

	o.Open(context.Background(), plain)
	if got.At == nil || got.Size != 30 {
		t.Errorf("plain file: At %v, Size %d; want random access to its 30 bytes", got.At, got.Size)
	}
	o.Open(context.Background(), packed)
	if got.At != nil || got.Size != 0 {
		t.Errorf("gzip file: At %v, Size %d; want none (the bytes parsed are not the file's)", got.At, got.Size)
	}
	o.Open(context.Background(), "-")
	if got.At != nil || got.Size != 0 {
		t.Errorf("stdin: At %v, Size %d; want none", got.At, got.Size)
	}
}
