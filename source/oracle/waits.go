package oracle

import (
	"fmt"
	"slices"
)

// waitRow is one completed wait of a session as the history views show it.
type waitRow struct {
	inst, sid, serial int64
	// id numbers the session's waits: X$KSLWH.KSLWHWAITID, or for
	// V$SESSION_WAIT_HISTORY the wait counter derived from V$SESSION_WAIT.SEQ#.
	id         int64
	event      string
	micros     int64 // duration
	p1, p2, p3 int64
}

// sessionKey is a session: SID and SERIAL# (a reused SID has a new serial).
type sessionKey struct{ inst, sid, serial int64 }

// ringSize is the depth of Oracle's per-session wait history
// (_session_wait_history = 10).
const ringSize = 10

// kslwhTracker de-duplicates X$KSLWH polls: each session's last 10 waits
// form a ring whose KSLWHWAITID grows by one per wait, so a wait is new when
// its id is above the last one taken from that session, and waits were
// missed when the smallest new id is more than one above it (more than 10
// waits between two polls).
type kslwhTracker struct {
	last   map[sessionKey]int64 // highest wait id taken per session
	primed bool                 // after the first poll
	missed int64
}

// poll takes one poll's rows and returns the waits not seen before. The
// first poll is the baseline (its waits happened before the sampler
// started, at unknown times); a session first seen later is new (its waits
// all count, as it started after the previous poll or had not waited yet).
// A session absent from a poll (exited, or filtered out) is forgotten; a
// reused SID is a new session by its SERIAL#. A wait id going down within a
// session (never seen; a reset) is a new baseline for that session.
func (t *kslwhTracker) poll(rs []waitRow) []waitRow {
	if t.last == nil {
		t.last = map[sessionKey]int64{}
	}
	rs = slices.Clone(rs)
	slices.SortFunc(rs, func(a, b waitRow) int {
		if c := compareSession(a, b); c != 0 {
			return c
		}
		return int(sign(a.id - b.id))
	})
	seen := map[sessionKey]bool{}
	var out []waitRow
	for i := 0; i < len(rs); {
		j := i
		for j < len(rs) && compareSession(rs[i], rs[j]) == 0 {
			j++
		}
		k := sessionKey{rs[i].inst, rs[i].sid, rs[i].serial}
		seen[k] = true
		out = append(out, t.session(k, rs[i:j])...)
		i = j
	}
	for k := range t.last {
		if !seen[k] {
			delete(t.last, k)
		}
	}
	t.primed = true
	return out
}

// session handles one session's rows, sorted by id.
func (t *kslwhTracker) session(k sessionKey, rs []waitRow) []waitRow {
	newest := rs[len(rs)-1].id
	last, known := t.last[k]
	t.last[k] = newest
	switch {
	case !known && !t.primed:
		return nil // baseline
	case !known:
		return dedupIDs(rs, rs[0].id-1)
	case newest < last:
		return nil // ids went back: new baseline
	}
	fresh := dedupIDs(rs, last)
	if len(fresh) > 0 && fresh[0].id > last+1 {
		t.missed += fresh[0].id - last - 1
	}
	return fresh
}

// dedupIDs returns the rows with ids above after, once each.
func dedupIDs(rs []waitRow, after int64) []waitRow {
	var out []waitRow
	for _, r := range rs {
		if r.id > after && (len(out) == 0 || out[len(out)-1].id != r.id) {
			out = append(out, r)
		}
	}
	return out
}

func compareSession(a, b waitRow) int {
	if c := sign(a.inst - b.inst); c != 0 {
		return int(c)
	}
	if c := sign(a.sid - b.sid); c != 0 {
		return int(c)
	}
	return int(sign(a.serial - b.serial))
}

func sign(x int64) int64 {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// swhRow is a V$SESSION_WAIT_HISTORY row joined to V$SESSION_WAIT.
type swhRow struct {
	waitRow
	position int64 // SEQ#: 1 = most recent completed wait
	waitSeq  int64 // V$SESSION_WAIT.SEQ#: the session's wait counter
	waiting  bool  // V$SESSION_WAIT.STATE = 'WAITING': the counted wait is not in the history yet
}

// seqModulus: V$SESSION_WAIT.SEQ# wraps at 65536 [unverified; the domain
// notes report 16 bits]; the counter is unwrapped against the previous poll.
const seqModulus = 65536

// swhTracker turns V$SESSION_WAIT_HISTORY polls into the same numbered waits
// as X$KSLWH, and then de-duplicates them with a kslwhTracker. SEQ# there is
// only a ring position: a history row's wait number is the counter of the
// last completed wait (V$SESSION_WAIT.SEQ#, minus one while the session is
// WAITING) minus (position − 1). The two views are not read atomically, so
// the counter may be ahead of the history by a wait or two: the numbering is
// checked against the waits of the previous poll (same event, duration and
// parameters at the same number) and shifted by up to maxShift to agree.
// Unreliable cases: a shift cannot be told when the overlapping waits are
// identical (e.g. the same idle event with the same duration), and a
// session that waited 65536 times between polls looks unchanged.
type swhTracker struct {
	kslwh   kslwhTracker
	prevSeq map[sessionKey]int64          // unwrapped counter
	prevBy  map[sessionKey]map[int64]wait // waits of the last poll by number
	shifted int64                         // polls whose numbering was corrected
	suspect int64                         // polls whose numbering agreed with no shift
}

type wait struct {
	event      string
	micros     int64
	p1, p2, p3 int64
}

const maxShift = 3

func (t *swhTracker) poll(rs []swhRow) []waitRow {
	if t.prevSeq == nil {
		t.prevSeq, t.prevBy = map[sessionKey]int64{}, map[sessionKey]map[int64]wait{}
	}
	bySession := map[sessionKey][]swhRow{}
	var order []sessionKey
	for _, r := range rs {
		k := sessionKey{r.inst, r.sid, r.serial}
		if _, ok := bySession[k]; !ok {
			order = append(order, k)
		}
		bySession[k] = append(bySession[k], r)
	}
	var numbered []waitRow
	prevSeq, prevBy := map[sessionKey]int64{}, map[sessionKey]map[int64]wait{}
	for _, k := range order {
		srs := bySession[k]
		seq := srs[0].waitSeq
		if p, ok := t.prevSeq[k]; ok {
			seq = p + (seq-p%seqModulus+seqModulus)%seqModulus
		}
		last := seq
		if srs[0].waiting {
			last--
		}
		ws := make([]waitRow, len(srs))
		for i, r := range srs {
			ws[i] = r.waitRow
			ws[i].id = last - (r.position - 1)
		}
		ws = t.align(k, ws)
		by := map[int64]wait{}
		for _, w := range ws {
			by[w.id] = wait{w.event, w.micros, w.p1, w.p2, w.p3}
		}
		prevSeq[k], prevBy[k] = seq, by
		numbered = append(numbered, ws...)
	}
	t.prevSeq, t.prevBy = prevSeq, prevBy
	return t.kslwh.poll(numbered)
}

// align shifts the numbering so that waits overlapping the previous poll
// agree with it (shift 0 preferred, then the smallest).
func (t *swhTracker) align(k sessionKey, ws []waitRow) []waitRow {
	prev := t.prevBy[k]
	if len(prev) == 0 {
		return ws
	}
	for _, d := range []int64{0, -1, 1, -2, 2, -3, 3} {
		if agrees(ws, prev, d) {
			if d != 0 {
				t.shifted++
				for i := range ws {
					ws[i].id += d
				}
			}
			return ws
		}
	}
	t.suspect++
	return ws
}

// agrees says that, shifted by d, the waits that overlap prev have its
// contents, and at least one overlaps (or none can: all newer).
func agrees(ws []waitRow, prev map[int64]wait, d int64) bool {
	maxPrev := int64(-1 << 62)
	for id := range prev {
		maxPrev = max(maxPrev, id)
	}
	overlap := 0
	for _, w := range ws {
		p, ok := prev[w.id+d]
		if !ok {
			if w.id+d <= maxPrev && w.id+d > maxPrev-ringSize {
				return false // would be a wait of the last poll that it did not show
			}
			continue
		}
		if p != (wait{w.event, w.micros, w.p1, w.p2, w.p3}) {
			return false
		}
		overlap++
	}
	return overlap > 0 || minID(ws)+d > maxPrev
}

func minID(ws []waitRow) int64 {
	m := ws[0].id
	for _, w := range ws {
		m = min(m, w.id)
	}
	return m
}

func (w waitRow) String() string {
	return fmt.Sprintf("inst %d sid %d serial %d wait %d %q %dµs p1=%d p2=%d", w.inst, w.sid, w.serial, w.id, w.event, w.micros, w.p1, w.p2)
}
