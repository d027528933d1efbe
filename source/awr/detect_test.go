package awr

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/lsr"
	"github.com/latscope/latscope/source/oracle10046"
	"github.com/latscope/latscope/source/pylatencymap"
	"github.com/latscope/latscope/stream"
)

// fixtureKinds says which format each (synthetic) fixture belongs to.
var fixtureKinds = map[string]string{
	"awr_19c_rac.csv":         AWRFormatName,
	"awr_11g_pagesize14.lst":  AWRFormatName,
	"awr_sqldeveloper_de.csv": AWRFormatName,
	"gv_micro_poll.csv":       PollFormatName,
	"gv_milli_poll_11g.lst":   PollFormatName,
}

func TestDetectFixtures(t *testing.T) {
	for file, kind := range fixtureKinds {
		data, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		awr, poll := Format().Detect(data), PollFormat().Detect(data)
		if (kind == AWRFormatName) != (awr == input.Yes) || (kind == PollFormatName) != (poll == input.Yes) {
			t.Errorf("%s: awr %v, poll %v; want only %s to say Yes", file, awr, poll, kind)
		}
		if Detect(data) != input.Yes {
			t.Errorf("%s: Detect %v", file, Detect(data))
		}
	}
}

// TestDetectPrefixes: a heading is recognised as soon as it is complete,
// a spool heading once its underline arrives.
func TestDetectPrefixes(t *testing.T) {
	spool, err := os.ReadFile(filepath.Join("testdata", "awr_11g_pagesize14.lst"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(spool), "\n")
	cases := []struct {
		prefix string
		want   input.Verdict
	}{
		{"", input.NeedMore},
		{"\n", input.NeedMore},
		{lines[0] + lines[1], input.NeedMore}, // the spool heading without its underline
		{lines[0] + lines[1] + lines[2], input.Yes},
		{"\ufeff\"SAMPLE_TIME\",\"EVENT\",\"WAIT_TIME_MICRO\",\"WAIT_COUNT\"\r\n", input.Yes},
		{"Connected.\nsample_time;inst_id;event;wait_time_milli;wait_count\n", input.Yes},
		// echoed SQL is not a heading
		{"SQL> select snap_id, event_name, wait_time_milli, wait_count\n  2  from dba_hist_event_histogram;\n", input.NeedMore},
		{"select end_interval_time,event_name,wait_time_milli,wait_count from x\n", input.NeedMore},
		// other formats
		{"<begin record>\ntimestamp, microsec, 1\n", input.No},
		{"Trace file /u01/orcl_ora_1.trc\nWAIT #1: nam='log file sync' ela= 5\n", input.No},
		{strings.Repeat("value  ------------- Distribution ------------- count\n", 400), input.No},
		{strings.Repeat("x", detectGiveUp) + "\n", input.No},
	}
	for _, c := range cases {
		if got := Detect([]byte(c.prefix)); got != c.want {
			t.Errorf("Detect(%.60q) = %v, want %v", c.prefix, got, c.want)
		}
	}
}

// TestDetectRealFilesOfOtherFormats: no real file of the shared test data
// (PyLatencyMap records, 10046 traces, DTrace stacks, ...) is claimed.
func TestDetectRealFilesOfOtherFormats(t *testing.T) {
	n := 0
	testenv.WalkData(t, func(path string) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		prefix := make([]byte, 64<<10)
		k, _ := io.ReadFull(f, prefix)
		prefix = prefix[:k]
		n++
		v := Detect(prefix)
		if v == input.Yes || (k >= detectGiveUp && v != input.No) {
			t.Errorf("%s: Detect %v, want No", path, v)
		}
	})
	if n < 10 {
		t.Errorf("only %d shared files checked", n)
	}
}

// TestOpenerPicksAWR: with the formats registered before it, the opener
// reads every fixture through this package (its intervals are named
// FILE@INSTANCE) and the real files of other formats through theirs.
func TestOpenerPicksAWR(t *testing.T) {
	op := &source.Opener{
		Formats: []source.Format{lsr.Format(), pylatencymap.Format(), oracle10046.Format(), Format(), PollFormat()},
		Diag:    input.NewDiagnostics(nil, 5),
	}
	for file := range fixtureKinds {
		src, err := op.Open(context.Background(), filepath.Join("testdata", file))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		n := 0
		err = src.Run(context.Background(), func(iv stream.Interval) error {
			if !strings.HasPrefix(iv.Source, filepath.Join("testdata", file)+"@") {
				t.Errorf("%s: interval of source %q", file, iv.Source)
			}
			n++
			return nil
		})
		if err != nil || n == 0 {
			t.Errorf("%s: %d intervals, err %v", file, n, err)
		}
	}
	src, err := op.Open(context.Background(), testenv.DataFile(t, "pylatencymap/example_latency_data.txt"))
	if err != nil {
		t.Fatal(err)
	}
	_ = src.Run(context.Background(), func(iv stream.Interval) error {
		if strings.Contains(iv.Source, "@") {
			t.Fatalf("PyLatencyMap sample read as AWR: %s", iv.Source)
		}
		return nil
	})
}
