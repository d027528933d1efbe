package pcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// archiveBase returns the base name of a committed archive of
// testdata/pcp, e.g. "host-v3".
func archiveBase(t testing.TB, name string) string {
	t.Helper()
	return strings.TrimSuffix(testenv.DataFile(t, "pcp/"+name+".meta"), ".meta")
}

type readOptions struct {
	from, to time.Time
	diag     *input.Diagnostics
}

// readAll reads an archive through the Store as latscope does, checking
// every interval as the driver would.
func readAll(t testing.TB, path string, o readOptions) []stream.Interval {
	t.Helper()
	ivs, err := read(path, o)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	for _, iv := range ivs {
		if err := iv.Validate(); err != nil {
			t.Fatalf("invalid interval: %v", err)
		}
	}
	return ivs
}

func read(path string, o readOptions) ([]stream.Interval, error) {
	src, err := Store().Open(path, source.Options{From: o.from, To: o.to}, o.diag)
	if err != nil {
		return nil, err
	}
	var ivs []stream.Interval
	err = src.Run(context.Background(), func(iv stream.Interval) error {
		ivs = append(ivs, iv)
		return nil
	})
	return ivs, err
}

// meanOf returns a series' value in an interval (Sum/Count; latencies in
// ms) and whether it is there.
func meanOf(iv stream.Interval, event, instance string) (float64, bool) {
	for _, m := range iv.Means {
		if m.Key.Event == event && m.Key.Instance == instance {
			if m.Quantity.IsLatency() {
				return m.Unit.Nanos(m.Sum) / m.Count / 1e6, true
			}
			return m.Sum / m.Count, true
		}
	}
	return 0, false
}

// sourceOptions forces the format, as --input-format pcp does.
func sourceOptions() source.Options { return source.Options{Format: FormatName} }

// realMeta is the committed v3 archive's metadata.
func realMeta(t testing.TB) *Meta {
	t.Helper()
	a, err := Open(archiveBase(t, "host-v3"))
	if err != nil {
		t.Fatal(err)
	}
	return a.Meta
}

func newBufReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }

func asFormatError(err error, fe **FormatError) bool { return errors.As(err, fe) }
