// Package load reads sampled stacks into a flame.Profile from what users
// have: perf.data (through `perf script`, streamed), perf script text,
// folded stacks, DTrace, SystemTap, bpftrace and gdb/pstack output, pprof
// profiles (format detected, gzip unwrapped), standard input, or a live
// `perf record` of a process or every CPU.
package load

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/flame"
	"github.com/latscope/latscope/flame/collapse"
	"github.com/latscope/latscope/flame/pprof"
	"github.com/latscope/latscope/input"
)

// Input says where sampled stacks come from: files (perf.data, perf
// script text, folded, DTrace, ...; "-" for stdin) or a live `perf record`.
type Input struct {
	Files []string
	// Format forces a stack format by name (perf, dtrace, stap, bpftrace,
	// gdb, folded, pprof); empty detects it.
	Format  string
	Options collapse.Options
	// SampleIndex picks a pprof input's sample type (pprof.ReadOptions).
	SampleIndex string
	// Live profiling with perf record: a PID, or All for every CPU.
	PID       int
	All       bool
	Duration  time.Duration
	Frequency int
	Event     string
	CallGraph string
	// TimeOrder keeps stacks in input order for flame charts (only
	// adjacent repeats merge).
	TimeOrder bool
	// Stdin is read for the file "-".
	Stdin io.Reader
}

// Progress lets a caller show how far big inputs have been read: Wrap
// wraps every opened file (size is its size at open), Status receives
// lines about a live recording, Done is called when the files are read.
// Zero fields do nothing.
type Progress struct {
	Wrap   func(name string, size int64, r io.Reader) io.Reader
	Status io.Writer
	Done   func()
}

// perfDataMagic starts every perf.data file (perf's header "PERFILE2").
var perfDataMagic = []byte("PERFILE2")

// detectPrefix is how much of an input stack-format detection reads.
const detectPrefix = 64 << 10

// Profile collapses every input into one profile.
func Profile(ctx context.Context, in Input, diag *input.Diagnostics, prog Progress) (*flame.Profile, error) {
	p := flame.New()
	if in.TimeOrder {
		p = flame.NewTimeOrdered()
	}
	if in.PID != 0 || in.All {
		if len(in.Files) > 0 {
			return nil, errors.New("give input files or --pid/--all, not both")
		}
		return p, recordLive(ctx, in, diag, prog.Status, p)
	}
	if len(in.Files) == 0 {
		return nil, errors.New("no INPUT given (perf.data, perf script text, folded stacks, ... or - for stdin; or --pid PID / --all)")
	}
	if prog.Done != nil {
		defer prog.Done()
	}
	for _, name := range in.Files {
		if err := collapseFile(ctx, name, in, diag, prog, p); err != nil {
			return p, err
		}
	}
	return p, nil
}

// collapseFile reads one input: perf.data through `perf script`, anything
// else (gzip unwrapped) through the detected or forced collapser.
func collapseFile(ctx context.Context, name string, in Input, diag *input.Diagnostics, prog Progress, p *flame.Profile) error {
	var r io.Reader = in.Stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
		if st, err := f.Stat(); err == nil && prog.Wrap != nil {
			r = prog.Wrap(name, st.Size(), f)
		}
	} else if in.Stdin == nil {
		return errors.New("no standard input")
	}
	br := bufio.NewReaderSize(r, detectPrefix)
	if head, _ := br.Peek(len(perfDataMagic)); bytes.Equal(head, perfDataMagic) {
		if name == "-" {
			return errors.New("-: perf.data on standard input: give the file name (perf script needs to seek)")
		}
		return perfScript(ctx, name, in, diag, p)
	}
	br, err := input.Decompressed(name, br, detectPrefix)
	if err != nil {
		return err
	}
	if isPprof(in.Format, br) {
		return readPprof(name, br, in, p)
	}
	f, err := stackFormat(name, in.Format, br)
	if err != nil {
		if head, _ := br.Peek(detectPrefix); in.Format == "" && pprof.StartsLikePprof(head) {
			return readPprof(name, br, in, p) // a cut or damaged profile: say what is wrong with it
		}
		return err
	}
	return f.Collapse(collapse.Input{Name: name, Reader: br, Diag: diag}, in.Options, p)
}

// pprofFormat is the format word of pprof protobuf profiles, read whole
// rather than collapsed line by line.
const pprofFormat = "pprof"

// isPprof says whether the input is forced to pprof or starts as a pprof
// protobuf does.
func isPprof(forced string, br *bufio.Reader) bool {
	if forced != "" {
		return forced == pprofFormat
	}
	head, err := br.Peek(detectPrefix)
	return pprof.LooksLikePprof(head, err != nil)
}

func readPprof(name string, r io.Reader, in Input, p *flame.Profile) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return pprof.Read(name, data, pprof.ReadOptions{SampleIndex: in.SampleIndex}, p)
}

// stackFormat returns the forced format or the one that recognises the
// input's start.
func stackFormat(name, forced string, br *bufio.Reader) (collapse.Format, error) {
	formats := collapse.Formats()
	if forced != "" {
		for _, f := range formats {
			if f.Name == forced {
				return f, nil
			}
		}
		return collapse.Format{}, fmt.Errorf("unknown stack format %q (want %s)", forced, formatNames(formats))
	}
	prefix, err := br.Peek(detectPrefix)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return collapse.Format{}, fmt.Errorf("%s: %w", name, err)
	}
	if len(bytes.TrimSpace(prefix)) == 0 {
		return collapse.Format{}, fmt.Errorf("%s: empty input: no stacks", name)
	}
	f, v := collapse.Detect(formats, prefix)
	if v != input.Yes {
		return collapse.Format{}, fmt.Errorf("%s: not a stack format latscope knows (%s); force one with the format word, e.g. `latscope collapse perf %s`",
			name, formatNames(formats), name)
	}
	return f, nil
}

func formatNames(formats []collapse.Format) string {
	names := make([]string, len(formats), len(formats)+1)
	for i, f := range formats {
		names[i] = f.Name
	}
	names = append(names, pprofFormat)
	return strings.Join(names, ", ")
}

// perfScript runs `perf script` on a perf.data file and collapses its
// output as it streams (memory bounded by distinct stacks).
func perfScript(ctx context.Context, file string, in Input, diag *input.Diagnostics, p *flame.Profile) error {
	args := []string{"script", "-i", file}
	if in.Options.PID || in.Options.TID {
		args = append(args, "-F", "+pid")
	}
	cmd := exec.CommandContext(ctx, "perf", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s is a perf.data file and reading it needs perf (linux-perf): %w", file, err)
	}
	f, _ := stackFormat(file, "perf", nil)
	cerr := f.Collapse(collapse.Input{Name: file + " (perf script)", Reader: out, Diag: diag}, in.Options, p)
	_, _ = io.Copy(io.Discard, out) // let perf finish if the collapser stopped early
	werr := cmd.Wait()
	if cerr != nil {
		return cerr
	}
	if werr != nil {
		return fmt.Errorf("perf script -i %s: %v: %s", file, werr, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// recordLive runs `perf record` on a process or every CPU for the
// duration, then collapses the recording; the temporary perf.data is
// removed whatever happens.
func recordLive(ctx context.Context, in Input, diag *input.Diagnostics, status io.Writer, p *flame.Profile) error {
	dir, err := os.MkdirTemp("", "latscope-flame-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	data := filepath.Join(dir, "perf.data")
	args := recordArgs(in, data)
	if status != nil {
		fmt.Fprintf(status, "latscope: profiling %s for %s at %d Hz (perf %s)\n", target(in), in.Duration, in.Frequency, strings.Join(args, " "))
	}
	cmd := exec.CommandContext(ctx, "perf", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("perf record: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return perfScript(ctx, data, in, diag, p)
}

func target(in Input) string {
	if in.All {
		return "every CPU"
	}
	return "PID " + strconv.Itoa(in.PID)
}

// recordArgs builds the perf record command line: sampling stacks at the
// frequency for the duration (a `sleep` child bounds it).
func recordArgs(in Input, out string) []string {
	args := []string{"record", "-q", "-o", out, "-F", strconv.Itoa(in.Frequency), "-e", in.Event}
	if in.CallGraph == "" || in.CallGraph == "fp" {
		args = append(args, "-g")
	} else {
		args = append(args, "--call-graph", in.CallGraph)
	}
	if in.All {
		args = append(args, "-a")
	} else {
		args = append(args, "-p", strconv.Itoa(in.PID))
	}
	secs := strconv.FormatFloat(in.Duration.Seconds(), 'f', -1, 64)
	return append(args, "--", "sleep", secs)
}
