package driver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/server/config"
	"github.com/latscope/latscope/server/jobs"
	"github.com/latscope/latscope/sink"
	otlpsink "github.com/latscope/latscope/sink/otlp"
	"github.com/latscope/latscope/stream"
)

// maxOTLPPending bounds the intervals kept for a receiver that is slow or
// down; beyond it the oldest go (the archive keeps them all).
const maxOTLPPending = 10000

// otlpForward passes the jobs' intervals on to the archive and keeps a
// copy for the OTLP sender, which sends them every interval. Sending never
// holds a job up: a receiver that is down loses the intervals of its
// outage (logged), not the archive's.
type otlpForward struct {
	next  jobs.Writer
	out   *otlpsink.Writer
	every time.Duration
	log   *slog.Logger

	mu      sync.Mutex
	pending []stream.Interval
	dropped int

	sending sync.Mutex // one send at a time: the ticker's or the last
}

// newOTLPForward starts nothing; run sends until ctx ends and close sends
// what is left.
func newOTLPForward(o config.OTLP, next jobs.Writer, stderr io.Writer, log *slog.Logger) (*otlpForward, error) {
	headers, err := readHeaderFile(o.HeadersFile)
	if err != nil {
		return nil, err
	}
	diag := input.NewDiagnostics(stderr, input.DefaultReportLimit)
	w, err := otlpsink.New(context.Background(), sink.Options{Name: "otlp " + o.Endpoint, Endpoint: o.Endpoint, Headers: headers, Diag: diag})
	if err != nil {
		return nil, err
	}
	return &otlpForward{next: next, out: w, every: o.Every, log: log}, nil
}

// Write stores the interval, then queues it for sending.
func (f *otlpForward) Write(ctx context.Context, iv stream.Interval) error {
	if err := f.next.Write(ctx, iv); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pending) >= maxOTLPPending {
		f.pending = f.pending[1:]
		f.dropped++
	}
	f.pending = append(f.pending, iv)
	return nil
}

// run sends every f.every until ctx ends.
func (f *otlpForward) run(ctx context.Context) {
	t := time.NewTicker(f.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.send()
		}
	}
}

// send exports what is queued; a failure is logged and its intervals
// dropped, so that one bad batch cannot hold the ones after it.
func (f *otlpForward) send() {
	f.sending.Lock()
	defer f.sending.Unlock()
	f.mu.Lock()
	batch, dropped := f.pending, f.dropped
	f.pending, f.dropped = nil, 0
	f.mu.Unlock()
	if dropped > 0 {
		f.log.Warn("otlp: the receiver is behind; the oldest intervals were not sent", "intervals", dropped)
	}
	var err error
	for _, iv := range batch {
		if err = f.out.Write(iv); err != nil {
			break
		}
	}
	if err == nil {
		err = f.out.Flush()
	}
	if err != nil {
		f.log.Warn("otlp: sending failed; these intervals stay in the archive only", "intervals", len(batch), "err", err)
	}
}

// close sends what is left and shuts the exporter down.
func (f *otlpForward) close() {
	f.send()
	if err := f.out.Close(); err != nil {
		f.log.Warn("otlp: closing", "err", err)
	}
}

// readHeaderFile reads "Name: value" lines ("" path: no headers).
func readHeaderFile(path string) (map[string]string, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("otlp headers_file: %w", err)
	}
	return parseHeaders(path, b)
}

// parseHeaders parses "Name: value" lines; blank lines and lines starting
// with # are skipped. Errors name the file and line, never the value.
func parseHeaders(name string, b []byte) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || !validHeaderName(k) || strings.ContainsAny(v, "\r\n\x00") {
			return nil, fmt.Errorf("%s:%d: want a header line Name: value", name, n)
		}
		out[http.CanonicalHeaderKey(k)] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// validHeaderName says whether k is an HTTP token (RFC 9110).
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r > 126 || r <= 32 || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}
