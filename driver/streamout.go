package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	lsrsink "github.com/latscope/latscope/sink/lsr"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/sink"
	"github.com/latscope/latscope/stream"
)

// streamOut writes a stream of intervals in one sink format to a file or
// to stdout: the one path of `latscope record`, `latscope convert` and the
// probes' --record. With live set, every interval is flushed as it is
// written (when the format can), so the file can be followed while it
// grows.
type streamOut struct {
	w     sink.Writer
	file  *os.File // nil for stdout
	name  string
	live  bool
	sent  bool // sent over the network (name is the endpoint)
	count int
}

// openStreamOut creates path ("" or "-": stdout) and a writer of format f;
// a format that is sent (otlp) goes to endpoint instead of a file.
func openStreamOut(f sink.Format, path, endpoint string, stdout io.Writer, diag *input.Diagnostics, live bool) (*streamOut, error) {
	if f.Sent {
		return openSentOut(f, path, endpoint, diag, live)
	}
	if endpoint != "" {
		return nil, fmt.Errorf("--to %s writes a file; only a format that is sent (otlp) takes an endpoint", f.Name)
	}
	out := &streamOut{name: "-", live: live}
	var w io.Writer = stdout
	if path != "" && path != "-" {
		file, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		out.file, out.name, w = file, path, file
	}
	sw, err := f.New(w, sink.Options{Name: out.name, Diag: diag})
	if err != nil {
		out.closeFile()
		return nil, fmt.Errorf("%s: %w", out.name, err)
	}
	out.w = sw
	return out, nil
}

// openSentOut opens a writer that sends to endpoint.
func openSentOut(f sink.Format, path, endpoint string, diag *input.Diagnostics, live bool) (*streamOut, error) {
	if path != "" {
		return nil, fmt.Errorf("--to %s is sent to an endpoint, not written to -o %s", f.Name, path)
	}
	sw, err := f.New(nil, sink.Options{Name: endpoint, Diag: diag, Endpoint: endpoint})
	if err != nil {
		return nil, err
	}
	return &streamOut{w: sw, name: endpoint, live: live, sent: true}, nil
}

// openRecording opens a latscope recording for writing.
func openRecording(path string, diag *input.Diagnostics, live bool) (*streamOut, error) {
	return openStreamOut(lsrsink.Format(), path, "", nil, diag, live)
}

// Write writes one interval.
func (s *streamOut) Write(iv stream.Interval) error {
	s.count++
	if err := s.w.Write(iv); err != nil {
		return err
	}
	if f, ok := s.w.(interface{ Flush() error }); ok && s.live {
		return f.Flush()
	}
	return nil
}

// Close flushes the writer and closes the file; it returns the first
// error.
func (s *streamOut) Close() error {
	err := s.w.Close()
	if cerr := s.closeFile(); err == nil {
		err = cerr
	}
	return err
}

func (s *streamOut) closeFile() error {
	if s.file == nil {
		return nil
	}
	return s.file.Close()
}

// forEach calls emit for every interval of o's sources: live sources as
// their intervals come, finished ones read to the end first and then
// emitted merged in time order. What was read before an error is still
// emitted. As with live sources, a consumer that stops early (emit fails
// because the context is done, e.g. a quitting view) is not an error.
func (c *Config) forEach(ctx context.Context, o *opened, emit func(stream.Interval) error) error {
	if o.live {
		return c.run(ctx, o, emit)
	}
	rec, err := c.collect(ctx, o)
	for _, iv := range rec.Intervals() {
		if eerr := emit(iv); eerr != nil {
			if errors.Is(eerr, context.Canceled) || errors.Is(eerr, context.DeadlineExceeded) {
				break
			}
			return eerr
		}
	}
	return err
}
