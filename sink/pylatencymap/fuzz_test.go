package pylatencymap

import (
	"testing"
	"time"

	"github.com/latscope/latscope/internal/testkit/recordingtest"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/source/oracle10046"
	plmsource "github.com/latscope/latscope/source/pylatencymap"
)

// FuzzWriter writes arbitrary valid streams (decoded from fuzzed recording
// frames, seeded with real data) and checks that the records stay records:
// time and every bucket's count never go backwards, and latscope's reader
// finds no malformed line.
func FuzzWriter(f *testing.F) {
	seeds := [][]byte{
		recordingtest.Encode(sourcetest.ReadShared(f, plmsource.Format(), "pylatencymap/example_latency_data.txt", source.Options{})[:5]),
		recordingtest.Encode(sourcetest.ReadShared(f, oracle10046.Format(), "trc10046/jkstill-trace-combine_12.2.0.1/js122a1_ora_9850.trc",
			source.Options{Interval: 100 * time.Millisecond})),
		recordingtest.Encode(oddIntervals(f)),
	}
	for _, s := range seeds {
		f.Add(recordingtest.Chunks(s))
	}
	f.Fuzz(func(t *testing.T, chunks []byte) {
		out, _ := convert(t, recordingtest.Intervals(chunks))
		recs := parseRecords(t, out)
		for i := 1; i < len(recs); i++ {
			if recs[i].usec <= recs[i-1].usec {
				t.Fatalf("record %d: timestamp %d after %d", i, recs[i].usec, recs[i-1].usec)
			}
			for n, c := range recs[i-1].rows {
				if recs[i].rows[n] < c {
					t.Fatalf("record %d: bucket %d goes back from %d to %d", i, n, c, recs[i].rows[n])
				}
			}
		}
		if _, diag := runFormat(t, plmsource.Format(), "fuzz.txt", out, source.Options{}); len(diag.Problems()) > 0 {
			t.Fatalf("reader: %+v\n%s", diag.Problems()[0].First, out)
		}
	})
}
