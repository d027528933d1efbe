package driver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// trickle hands its data out a few hundred bytes per Read, as a pipe from
// a running tool does: detection judges growing prefixes.
type trickle struct{ rest string }

func (t *trickle) Read(p []byte) (int, error) {
	if t.rest == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 300)], t.rest)
	t.rest = t.rest[n:]
	return n, nil
}

// logLines is n lines of a script's log, the kind of lines people find
// above a tool's output in a saved file (SYNTHETIC).
func logLines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "2024-03-14 10:%02d:%02d INFO wait_hist: attaching probes, step %d of %d\n", i/60%60, i%60, i, n)
	}
	return b.String()
}

// detected returns the name of the format the Opener picks for data fed
// through a pipe, or the error.
func detected(t *testing.T, data string) (string, error) {
	t.Helper()
	formats := Formats()
	var picked string
	for i := range formats {
		f := &formats[i]
		open := f.Open
		f.Open = func(in source.Input, opts source.Options) (source.Source, error) {
			picked = f.Name
			return open(in, opts)
		}
	}
	o := &source.Opener{Formats: formats, Diag: input.NewDiagnostics(nil, 5), Stdin: &trickle{rest: data}}
	_, err := o.Open(context.Background(), "-")
	return picked, err
}

func readRepo(t *testing.T, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// A known format is found after prose or log lines, from a pipe as from a
// file, within detection's 64 KiB; and prose alone, or a format's lines
// behind it, is not taken for another format.
func TestDetectAfterLeadingProse(t *testing.T) {
	bcc := readRepo(t, "source/tracehist/testdata/bcc_wait_hist_recorded.txt")
	oraBCC := readRepo(t, "source/tracehist/testdata/bcc_oracle_wait_SYNTHETIC.txt")
	record := "<begin record>\ntimestamp, microsec, 1426358407973575, Sat Mar 14 19:40:07 2015 CET\nlabel, x\nlatencyunit, microsec\n64,1\n<end record>\n"
	waitLines := "10:15:01 pid=4242 event=db file sequential read wait_time=312\n10:15:01 pid=4242 event=log file sync wait_time=845\n"
	for _, tc := range []struct {
		name, data, want string
	}{
		{"bcc recorded", bcc, "bcc"},
		{"bcc recorded after 16 KiB of log", logLines(220) + bcc, "bcc"},
		{"bcc Oracle shape", oraBCC, "bcc"},
		{"bcc Oracle shape after 40 KiB of log", logLines(550) + oraBCC, "bcc"},
		{"pylatencymap record after 16 KiB of log", logLines(220) + record, "pylatencymap"},
		{"ora_wait_trace lines after 16 KiB of log", logLines(220) + "Tracing... Hit Ctrl-C to end.\n" + waitLines, "oracle-wait-lines"},
		// Negative: section-like lines without a table are no bcc.
		{"event= lines without a table", logLines(10) + "event=db file sequential read\nevent=log file sync\n" + waitLines, "oracle-wait-lines"},
	} {
		// Whole (as a file) and trickled (as a pipe): the same answer.
		for _, f := range Formats() {
			prefix := []byte(tc.data[:min(len(tc.data), input.DetectLimit)])
			if f.Detect(prefix) == input.Yes && f.Name != tc.want {
				t.Errorf("%s: %s says Yes on the 64 KiB prefix, want only %s", tc.name, f.Name, tc.want)
			}
		}
		got, err := detected(t, tc.data)
		if err != nil || got != tc.want {
			t.Errorf("%s through a pipe: %q, %v; want %s", tc.name, got, err, tc.want)
		}
	}
	// Beyond 64 KiB of log nothing is found: not recognised, never a guess.
	if n := len(logLines(1000)); n <= input.DetectLimit {
		t.Fatalf("%d bytes of log lines do not pass the detection limit", n)
	}
	if got, err := detected(t, logLines(1000)+bcc); !errors.Is(err, source.ErrUnknownFormat) {
		t.Errorf("bcc after 75 KiB of log: %q, %v; want not recognised", got, err)
	}
	if got, err := detected(t, logLines(1000)); !errors.Is(err, source.ErrUnknownFormat) {
		t.Errorf("log lines alone: %q, %v; want not recognised", got, err)
	}
}
