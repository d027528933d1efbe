package awr

import (
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/stream"
)

// TestMapperStreamRows drives the exported row API as the live oracle://
// poller does (SYNTHETIC rows): two polls closed by ClosePoll, rows of an
// unwanted event left out by Keep, and rows wrong on their own reported.
func TestMapperStreamRows(t *testing.T) {
	diag := input.NewDiagnostics(nil, 10)
	var got []stream.Interval
	m := NewMapper(MapperConfig{Name: "live", Diag: diag, Cumulative: true,
		Keep: func(ev string) bool { return ev == lfs },
		Emit: func(iv stream.Interval) error { got = append(got, iv); return nil }})
	t0 := time.Date(2024, 3, 15, 10, 0, 0, 0, time.UTC)
	poll := func(at time.Time, counts ...float64) {
		for i, c := range counts {
			for _, ev := range []string{lfs, dfsr} {
				if m.Keep(ev) {
					if err := m.Add(Row{Line: i + 1, Instance: "1", End: at, Event: ev, Unit: hist.Microsecond,
						Bound: float64(int(1) << (i + 6)), Count: c}); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		if err := m.ClosePoll(); err != nil {
			t.Fatal(err)
		}
	}
	poll(t0, 10, 20)
	if len(got) != 0 {
		t.Fatalf("the baseline emitted %v", got)
	}
	poll(t0.Add(time.Second), 15, 26)
	_ = m.Add(Row{Line: 9, Event: lfs, End: t0, Unit: hist.Microsecond, Bound: 3, Count: 1})
	_ = m.Add(Row{Line: 10, Event: lfs, End: t0, Unit: hist.Microsecond, Bound: 4, Count: -1})
	_ = m.Add(Row{Line: 11, Event: "", End: t0, Unit: hist.Microsecond, Bound: 4, Count: 1})
	if err := m.Finish(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Source != "live@1" || !got[0].Start.Equal(t0) || got[0].Duration != time.Second ||
		len(got[0].Series) != 1 || got[0].Series[0].Hist.Count() != 11 {
		t.Fatalf("got %+v", got)
	}
	probs := diag.Problems()
	if diag.Count("live") != 3 || len(probs) != 1 || !strings.Contains(probs[0].First[0].Reason, "not a power of two") {
		t.Errorf("problems %+v", probs)
	}
}
