package tracehist

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
)

// FuzzParse feeds any bytes through every format's Detect and Run, in both
// counting modes: no panic, every interval valid with no negative counts,
// intervals following each other without overlap on one kind of clock.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.txt")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:min(len(data), 3000)], uint8(0))
	}
	for _, rel := range []string{"pylatencymap/test_DTrace_data.txt", "pylatencymap/test_SystemTap_data.txt"} {
		data, err := os.ReadFile(testenv.DataFile(f, rel))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:3000], uint8(0))
	}
	for i, s := range []string{dtraceKeyed, dtraceLinear, stapLinear, bpftraceCumulative} {
		f.Add([]byte(s), uint8(i))
	}
	formats := Formats()
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		format := formats[int(which)%len(formats)]
		for _, g := range formats {
			g.Detect(data)
		}
		opts := source.Options{Location: time.UTC, Date: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)}
		if which&0x10 != 0 {
			opts.Counts = source.CountsCumulative
		} else if which&0x20 != 0 {
			opts.Counts = source.CountsInterval
		}
		if which&0x40 != 0 {
			opts.Unit = hist.Millisecond
		}
		// Input that holds no table is an error naming its lines, never a
		// failure of another kind.
		if res := run(t, format.Name, "fuzz", bytes.NewReader(data), opts); res.Err != nil && !errors.Is(res.Err, input.ErrNothingRead) {
			t.Fatalf("Run: %v", res.Err)
		}
	})
}
