package oracle

import (
	"bufio"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/testenv"
	"github.com/latscope/latscope/stream"
)

// realPoll is one record of PyLatencyMap's example_latency_data.txt: real
// gv$event_histogram rows of 'db file sequential read' on a two-instance RAC
// (26 Aug 2013), printed by ora_latency.sql every 3 s. The instance is not
// printed and the query had no ORDER BY inst_id: each poll holds two blocks
// of rows (the bounds start again at 1), in either order (records 9 and 10
// swap them). The test tells the instances apart as the only assignment that
// keeps every counter from going down (the 1 ms counts differ by 1.4 million).
type realPoll struct {
	stamp  string // as Oracle printed it
	at     time.Time
	inst   []int
	bound  []int64
	counts []int64
}

func readRealPolls(t *testing.T) []realPoll {
	t.Helper()
	f, err := os.Open(testenv.DataFile(t, "pylatencymap/example_latency_data.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []realPoll
	var cur *realPoll
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "<begin record>":
			out = append(out, realPoll{})
			cur = &out[len(out)-1]
		case line == "<end record>":
			cur = nil
		case cur == nil:
		case strings.HasPrefix(line, "timestamp,"):
			f := strings.Split(line, ",")
			cur.stamp = strings.TrimSpace(f[3])
			s := cur.stamp[:3] + strings.ToLower(cur.stamp[3:6]) + cur.stamp[6:]
			if cur.at, err = time.Parse("02-Jan-06 03.04.05.000000 PM -07:00", s); err != nil {
				t.Fatal(err)
			}
		case line != "" && line[0] >= '0' && line[0] <= '9':
			f := strings.Split(line, ",")
			b, _ := strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64)
			c, _ := strconv.ParseInt(strings.TrimSpace(f[1]), 10, 64)
			inst := 1
			if n := len(cur.bound); n > 0 && (b <= cur.bound[n-1] || cur.inst[n-1] == 2) {
				inst = 2
			}
			cur.inst, cur.bound, cur.counts = append(cur.inst, inst), append(cur.bound, b), append(cur.counts, c)
		}
	}
	if len(out) != 72 {
		t.Fatalf("%d records, want 72", len(out))
	}
	for k := 1; k < len(out); k++ {
		if !monotone(out[k-1], out[k]) {
			out[k].swapInstances()
			if !monotone(out[k-1], out[k]) {
				t.Fatalf("record %d: no instance assignment keeps the counters monotone", k+1)
			}
		}
	}
	return out
}

// monotone says every (instance, bound) count of cur is at least prev's.
func monotone(prev, cur realPoll) bool {
	type ib struct {
		inst  int
		bound int64
	}
	before := map[ib]int64{}
	for i := range prev.bound {
		before[ib{prev.inst[i], prev.bound[i]}] = prev.counts[i]
	}
	for i := range cur.bound {
		if c, ok := before[ib{cur.inst[i], cur.bound[i]}]; ok && cur.counts[i] < c {
			return false
		}
	}
	return true
}

func (rp *realPoll) swapInstances() {
	for i := range rp.inst {
		rp.inst[i] = 3 - rp.inst[i]
	}
}

// asRows turns a real poll into the rows the milli query returns (without
// STARTUP_TIME, which the 2013 script did not select: awr does not need it).
func (rp realPoll) asRows(onlyInst int) *rows {
	r := &rows{columns: []string{"SAMPLE_TIME", "INST_ID", "EVENT", "WAIT_TIME_MILLI", "WAIT_COUNT"}}
	for i := range rp.bound {
		if onlyInst != 0 && rp.inst[i] != onlyInst {
			continue
		}
		r.values = append(r.values, []any{rp.stamp, int64(rp.inst[i]), "db file sequential read", rp.bound[i], rp.counts[i]})
	}
	return r
}

// runPoller replays fixture polls through the real code path and returns
// what it emits.
func runPoller(t *testing.T, fx *fixtureRowSource, inst, polls int) ([]stream.Interval, *histPoller, *input.Diagnostics) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []stream.Interval
	diag := &input.Diagnostics{}
	clock := time.Date(2013, 8, 26, 15, 56, 36, 0, time.UTC)
	now := func() time.Time { return clock }
	p := &histPoller{ctx: ctx, rs: fx, name: "oracle://u@db:1521/S", diag: diag, events: strings.Join(DefaultEvents, ","),
		inst: inst, loc: time.UTC, now: now,
		emit: func(iv stream.Interval) error { got = append(got, iv); return nil }}
	// a fake clock: every sleep advances it, and the run stops after the polls
	p.pace = newPacer(time.Second, now, func(ctx context.Context, d time.Duration) error {
		if p.polls+p.failed >= polls {
			cancel()
			return ctx.Err()
		}
		clock = clock.Add(d)
		return nil
	})
	if err := p.run(); err != nil {
		t.Fatal(err)
	}
	for _, iv := range got {
		if err := iv.Validate(); err != nil {
			t.Fatal(err)
		}
	}
	return got, p, diag
}

// wantDeltas computes independently, per bound, the waits between the first
// and last poll (summed over the chosen instances) and checks no counter goes
// down in the real data.
func wantDeltas(t *testing.T, polls []realPoll, onlyInst int) map[int64]int64 {
	want := map[int64]int64{}
	type ib struct {
		inst  int
		bound int64
	}
	for k := 1; k < len(polls); k++ {
		prev := map[ib]int64{}
		for i, b := range polls[k-1].bound {
			prev[ib{polls[k-1].inst[i], b}] = polls[k-1].counts[i]
		}
		cur := polls[k]
		for i := range cur.bound {
			if onlyInst != 0 && cur.inst[i] != onlyInst {
				continue
			}
			p, ok := prev[ib{cur.inst[i], cur.bound[i]}]
			if !ok || cur.counts[i] < p {
				t.Fatalf("record %d row %d: counter went down or bound new", k+1, i)
			}
			want[cur.bound[i]] += cur.counts[i] - p
		}
	}
	return want
}

func TestHistogramPollerReplaysRealGVRows(t *testing.T) {
	polls := readRealPolls(t)
	for _, inst := range []int{0, 1} {
		fx := &fixtureRowSource{}
		fx.add("gv$event_histogram_micro h", nil, errors.New("ORA-00942: table or view does not exist"))
		for _, rp := range polls {
			fx.add("gv$event_histogram h", rp.asRows(inst), nil)
		}
		got, p, diag := runPoller(t, fx, inst, len(polls))
		if p.micro != -1 || p.polls != 72 || p.failed != 0 || diag.Count(p.name) != 0 {
			t.Fatalf("inst %d: micro %d, %d polls, %d failed, %d problems", inst, p.micro, p.polls, p.failed, diag.Count(p.name))
		}
		if len(got) != 71 {
			t.Fatalf("inst %d: %d intervals, want 71", inst, len(got))
		}
		gotCounts := map[int64]int64{}
		for k, iv := range got {
			wantSrc, wantInst := p.name, ""
			if inst != 0 {
				wantSrc, wantInst = p.name+"@1", "1"
			}
			if iv.Gap || iv.Source != wantSrc || !iv.Start.Equal(polls[k].at) || !iv.End().Equal(polls[k+1].at) {
				t.Fatalf("inst %d interval %d: %+v, want %s..%s", inst, k, iv, polls[k].at, polls[k+1].at)
			}
			for _, s := range iv.Series {
				if s.Key != (stream.Key{Event: "db file sequential read", Instance: wantInst}) {
					t.Fatalf("key %+v", s.Key)
				}
				for _, b := range s.Hist.Buckets() {
					gotCounts[int64(b.Upper)] += int64(b.Count)
				}
			}
		}
		want := wantDeltas(t, polls, inst)
		for b, n := range want {
			if gotCounts[b] != n {
				t.Errorf("inst %d bound %d ms: %d waits, want %d", inst, b, gotCounts[b], n)
			}
		}
		if len(gotCounts) > len(want) {
			t.Errorf("inst %d: buckets %v, want %v", inst, gotCounts, want)
		}
	}
	// first interval, both instances, computed by hand from the file:
	// 1 ms bucket 4129312+2681431 → records 2's values.
	t.Logf("first window %s + %s", polls[0].at, polls[1].at.Sub(polls[0].at))
}
