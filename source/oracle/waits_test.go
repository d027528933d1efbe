package oracle

import (
	"slices"
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

// seedKSLWH are the X$KSLWH rows printed in the seed
// /work/shared/seeds/000_bc1fd9b6160af165.txt (Canali, "Wait Event History
// Sampling"): KSLWHSID KSLWHWAITID KSLWHETEXT KSLWHETIME KSLWHP1 KSLWHP2
// KSLWHP3, newest first, as the fixed table returned them. SERIAL is not in
// the seed (the query takes it from V$SESSION): 7 is synthetic.
func seedKSLWH() *rows {
	return &rows{
		columns: []string{"SID", "SERIAL", "WAIT_ID", "EVENT", "WAIT_TIME_MICRO", "P1", "P2", "P3"},
		values: [][]any{
			{"42", "7", "21016", "db file sequential read", "300", "25", "148935", "1"},
			{"42", "7", "21015", "db file sequential read", "1020", "25", "47683", "1"},
			{"42", "7", "21014", "db file sequential read", "16024", "25", "124765", "1"},
			{"42", "7", "21013", "db file sequential read", "4100", "25", "57668", "1"},
		},
	}
}

func plain(ws []swhRow) []waitRow {
	out := make([]waitRow, len(ws))
	for i, w := range ws {
		out[i] = w.waitRow
	}
	return out
}

func ids(ws []waitRow) []int64 {
	var out []int64
	for _, w := range ws {
		out = append(out, w.id)
	}
	return out
}

// synthetic: session 42's next waits after the seed's, in ring order.
func kslwhWaits(sid, serial, from, to int64) []waitRow {
	var out []waitRow
	for id := to; id >= from && id > to-ringSize; id-- {
		out = append(out, waitRow{sid: sid, serial: serial, id: id, event: "db file sequential read", micros: id % 1000, p1: 25, p2: id})
	}
	return out
}

func TestKSLWHSeedRowsAndDeduplication(t *testing.T) {
	seed, bad, err := mapWaits(seedKSLWH())
	if err != nil || bad != 0 || len(seed) != 4 {
		t.Fatalf("mapped %d rows, %d bad, %v", len(seed), bad, err)
	}
	if w := seed[2].waitRow; w != (waitRow{sid: 42, serial: 7, id: 21014, event: "db file sequential read", micros: 16024, p1: 25, p2: 124765, p3: 1}) {
		t.Fatalf("row 3 mapped to %+v", w)
	}

	// The sampler starts while session 42 is running: the seed's rows are the
	// baseline, then (synthetic) 3 more waits arrive, then the same poll again.
	var tr kslwhTracker
	if got := tr.poll(plain(seed)); len(got) != 0 {
		t.Fatalf("baseline poll returned %v", got)
	}
	next := append(kslwhWaits(42, 7, 21017, 21019), plain(seed)...)
	if got := ids(tr.poll(next)); !slices.Equal(got, []int64{21017, 21018, 21019}) {
		t.Fatalf("overlapping poll: new ids %v", got)
	}
	if got := tr.poll(next); len(got) != 0 || tr.missed != 0 {
		t.Fatalf("same poll again: %v, missed %d", got, tr.missed)
	}
	// the ring wraps: 21020..21029 overwrite every slot (10 new, none missed)
	if got := ids(tr.poll(kslwhWaits(42, 7, 21020, 21029))); len(got) != 10 || got[0] != 21020 || tr.missed != 0 {
		t.Fatalf("full ring: %v, missed %d", got, tr.missed)
	}
	// 23 waits between polls: only the last 10 are visible, 13 missed
	if got := ids(tr.poll(kslwhWaits(42, 7, 21030, 21052))); len(got) != 10 || got[0] != 21043 || tr.missed != 13 {
		t.Fatalf("overrun: %v, missed %d", got, tr.missed)
	}
	// session 42 exits and its SID is reused (serial 8): every wait is new
	if got := ids(tr.poll(kslwhWaits(42, 8, 5, 7))); !slices.Equal(got, []int64{5, 6, 7}) || len(tr.last) != 1 {
		t.Fatalf("reused SID: %v, sessions %v", got, tr.last)
	}
	// a new session after the first poll: the seed's waits all count, exactly
	var tr2 kslwhTracker
	tr2.poll(nil)
	var c waitCollector
	var reads []stream.BlockRead
	c.onBlockRead = func(b stream.BlockRead) { reads = append(reads, b) }
	at := time.Date(2014, 2, 1, 10, 0, 0, 0, time.UTC)
	c.add(tr2.poll(plain(seed)), at)
	iv := c.interval("x", at.Add(-time.Second), at)
	if len(iv.Series) != 1 {
		t.Fatalf("%d series", len(iv.Series))
	}
	h := iv.Series[0].Hist
	if h.Count() != 4 || h.Sum != 300+1020+16024+4100 || !h.SumExact || h.Quantile(1) < 16024 {
		t.Fatalf("histogram count %g sum %g exact %v", h.Count(), h.Sum, h.SumExact)
	}
	if len(reads) != 4 || reads[0] != (stream.BlockRead{Time: at, Event: "db file sequential read", File: 25, Block: 57668, Blocks: 1, Micros: 4100}) {
		t.Fatalf("block reads %+v", reads)
	}
}

// swhRows builds synthetic V$SESSION_WAIT_HISTORY rows for the waits
// last-9..last of session (sid 42, serial 7): position 1 = last.
func swhRows(last, waitSeq int64, waiting bool) []swhRow {
	var out []swhRow
	for pos := int64(1); pos <= ringSize; pos++ {
		id := last - (pos - 1)
		out = append(out, swhRow{waitRow: waitRow{sid: 42, serial: 7, event: "db file sequential read", micros: 100 + id%97, p1: 25, p2: 1000 + id},
			position: pos, waitSeq: waitSeq, waiting: waiting})
	}
	return out
}

func TestSessionWaitHistoryNumbering(t *testing.T) {
	var tr swhTracker
	tr.poll(swhRows(100, 100, false)) // baseline: last wait 100 completed
	// the session is WAITING in wait 104: 101..103 are new
	if got := ids(tr.poll(swhRows(103, 104, true))); !slices.Equal(got, []int64{101, 102, 103}) || tr.shifted != 0 {
		t.Fatalf("new waits %v (shifted %d)", got, tr.shifted)
	}
	// the counter was read two waits after the history (not atomic): the
	// contents put the waits back at 104..105
	if got := ids(tr.poll(swhRows(105, 107, false))); !slices.Equal(got, []int64{104, 105}) || tr.shifted != 1 {
		t.Fatalf("misaligned counter: %v (shifted %d)", got, tr.shifted)
	}
	// the 16-bit counter wraps: 65535 + 3 waits = 2
	var wr swhTracker
	wr.poll(swhRows(65535, 65535, false))
	rs := swhRows(65538, 2, false)
	if got := ids(wr.poll(rs)); !slices.Equal(got, []int64{65536, 65537, 65538}) || wr.kslwh.missed != 0 {
		t.Fatalf("wrapped counter: %v missed %d", got, wr.kslwh.missed)
	}
}
