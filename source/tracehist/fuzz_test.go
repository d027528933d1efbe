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
	// bcc as people save it: prose first, free-text value labels, every
	// section form, labels naming no unit or a size, prose alone.
	for _, s := range []string{
		"Tracing... Hit Ctrl-C to end.\n\n10:15:10\n\nevent=db file sequential read\n     wait time, microsec : count     distribution\n" +
			"       128 -> 255        : 240      |******|\n       256 -> 511        : 380      |********|\n",
		"event = 'log file sync'\n     latency (ms) : count distribution\n  1 -> 1 : 7 |**|\n\ndirect path read\n" +
			"     nsecs : count distribution\n  0 -> 1 : 0 | |\n  2 -> 3 : 9 |***|\n",
		"event# = 146\n     value               : count     distribution\n         4 -> 7          : 3        |****|\n\n" +
			"kind=sizes\n     Kbytes : count distribution\n  4 -> 7 : 3 |*|\n",
		"Tracing wait events...\nHit Ctrl-C to end.\n^C\nDetaching...\n",
	} {
		f.Add([]byte(s), uint8(2)) // bcc
		f.Add([]byte(s), uint8(2|0x40))
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
