package source

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// Probe opens a live source named "scheme:ARG" on the command line, such
// as iotest:DIR.
type Probe struct {
	Scheme      string
	Description string
	Open        func(arg string, opts Options, diag *input.Diagnostics) (Source, error)
}

// Opener turns command-line SOURCE arguments into Sources.
type Opener struct {
	Formats []Format
	Stores  []Store
	Probes  []Probe
	Options Options
	Diag    *input.Diagnostics
	// Stdin is read for the SOURCE "-".
	Stdin io.Reader
	// WrapFile, when set, wraps every opened file before reading (the
	// driver counts bytes for progress); size is the file size at open.
	WrapFile func(name string, size int64, r io.Reader) io.Reader
}

// ErrUnknownFormat says no format recognised an input.
var ErrUnknownFormat = errors.New("input format not recognised")

// detectLimit is how much of an input detection may read.
const detectLimit = input.DetectLimit

// Open opens one SOURCE: "-" (stdin), "scheme:ARG" for a live probe, or a
// file path.
func (o *Opener) Open(ctx context.Context, spec string) (Source, error) {
	if scheme, arg, ok := strings.Cut(spec, ":"); ok {
		for _, p := range o.Probes {
			if p.Scheme == scheme {
				return p.Open(arg, o.Options, o.Diag)
			}
		}
	}
	if spec == "-" {
		if o.Stdin == nil {
			return nil, errors.New("no standard input")
		}
		return o.openReader("-", o.Stdin, time.Time{}, nil, 0)
	}
	for _, st := range o.Stores {
		if st.Match(spec) || st.Name == o.Options.Format {
			return st.Open(spec, o.Options, o.Diag)
		}
	}
	f, err := os.Open(spec)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory without an archive (give a file, - for stdin, an archive directory holding latscope.db, or a probe such as iotest:%s)", spec, spec)
	}
	var r io.Reader = f
	var closer io.Closer = f
	var follow *input.Follower
	if o.WrapFile != nil && !o.Options.Follow {
		if st, err := f.Stat(); err == nil {
			r = o.WrapFile(spec, st.Size(), f)
		}
	}
	if o.Options.Follow {
		if err := input.WaitForData(ctx, f, 200*time.Millisecond); err != nil {
			f.Close()
			return nil, err
		}
		fr := input.Follow(ctx, spec, f, 200*time.Millisecond)
		r, closer, follow = fr, fr, fr
	}
	var mod time.Time
	var at io.ReaderAt
	var size int64
	if st, err := f.Stat(); err == nil {
		mod = st.ModTime()
		if ra, ok := r.(io.ReaderAt); ok && st.Mode().IsRegular() && !o.Options.Follow && !gzipped(f) {
			at, size = ra, st.Size()
		}
	}
	src, err := o.openReader(spec, r, mod, at, size)
	if err != nil {
		closer.Close()
		return nil, err
	}
	return &closingSource{Source: src, c: closer, follow: follow}, nil
}

// openReader detects the format (or takes --input-format) and opens it.
func (o *Opener) openReader(name string, r io.Reader, modTime time.Time, at io.ReaderAt, size int64) (Source, error) {
	br, err := input.Decompressed(name, r, detectLimit)
	if err != nil {
		return nil, err
	}
	input := Input{Name: name, Reader: br, Diag: o.Diag, ModTime: modTime, At: at, Size: size}
	if o.Options.Format != "" {
		for _, f := range o.Formats {
			if f.Name == o.Options.Format {
				return f.Open(input, o.Options)
			}
		}
		return nil, fmt.Errorf("unknown input format %q (known: %s)", o.Options.Format, strings.Join(o.FormatNames(), ", "))
	}
	f, empty, err := o.detect(br)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if empty {
		return emptySource{name: name}, nil
	}
	return f.Open(input, o.Options)
}

// detect offers a growing prefix to every format until one says Yes, all
// say No, or the limit or end of input is reached. It reads only what has
// arrived, so a slow pipe is recognised as soon as its first lines tell.
func (o *Opener) detect(br *bufio.Reader) (f Format, empty bool, err error) {
	want := 1
	for {
		_, perr := br.Peek(want)
		prefix, _ := br.Peek(br.Buffered())
		blank := len(bytes.TrimSpace(prefix)) == 0
		if !blank {
			undecided := false
			for _, f := range o.Formats {
				switch f.Detect(prefix) {
				case input.Yes:
					return f, false, nil
				case input.NeedMore:
					undecided = true
				}
			}
			if !undecided {
				return Format{}, false, o.unknown()
			}
		}
		if perr != nil || len(prefix) >= detectLimit {
			if perr != nil && perr != io.EOF && perr != bufio.ErrBufferFull {
				return Format{}, false, perr
			}
			if blank {
				return Format{}, true, nil
			}
			return Format{}, false, o.unknown()
		}
		want = len(prefix) + 1
	}
}

func (o *Opener) unknown() error {
	return fmt.Errorf("%w: tried %s (use --input-format to force one)", ErrUnknownFormat, strings.Join(o.FormatNames(), ", "))
}

// FormatNames lists the known formats.
func (o *Opener) FormatNames() []string {
	var names []string
	for _, f := range o.Formats {
		names = append(names, f.Name)
	}
	return names
}

// closingSource closes the file when the source is done. A followed file
// waits for data until the context of Run (not of Open) is done, so that
// --duration and a quitting view stop it.
type closingSource struct {
	Source
	c      io.Closer
	follow *input.Follower
}

func (s *closingSource) Run(ctx context.Context, emit func(stream.Interval) error) error {
	defer s.c.Close()
	if s.follow != nil {
		s.follow.SetContext(ctx)
	}
	return s.Source.Run(ctx, emit)
}

// emptySource is an empty input: no intervals, no error.
type emptySource struct{ name string }

func (e emptySource) Name() string                                           { return e.name }
func (e emptySource) Run(context.Context, func(stream.Interval) error) error { return nil }

// gzipped says whether a file starts with the gzip magic number.
func gzipped(f *os.File) bool {
	var magic [2]byte
	n, _ := f.ReadAt(magic[:], 0)
	return n == 2 && magic == [2]byte{0x1f, 0x8b}
}
