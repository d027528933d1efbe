package postgres

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// Mean series names. They all say "mean": the views show Key.Event, and
// these series are a count and a total per window, never a distribution.
const (
	// StatementMeanPrefix starts the series of one pg_stat_statements
	// statement (its normalised text follows).
	StatementMeanPrefix = "statement mean: "
	// AllStatementsMean is every pg_stat_statements statement together.
	AllStatementsMean = StatementMeanPrefix + "all statements"
	// OtherStatementsMean sums the statements beyond the top
	// maxStatementMeans of a window.
	OtherStatementsMean = StatementMeanPrefix + "(other statements)"
	// BlockReadMean is pg_stat_database's blk_read_time over blks_read
	// (Instance: the database).
	BlockReadMean = "block read mean"
	// IOReadMean, IOWriteMean and IOFsyncMean are pg_stat_io's times over
	// their operation counts (PostgreSQL 16+; Instance: backend_type).
	IOReadMean  = "io read mean"
	IOWriteMean = "io write mean"
	IOFsyncMean = "io fsync mean"
	// maxStatementMeans caps the per-statement mean series of a window,
	// chosen by their total time in it.
	maxStatementMeans = 20
)

// stmtKey identifies a pg_stat_statements entry (toplevel is always true
// before PostgreSQL 14, which has no such column).
type stmtKey struct {
	userID, dbID uint32
	queryID      int64
	toplevel     bool
}

// stmtRow is one entry's cumulative counters.
type stmtRow struct {
	key     stmtKey
	calls   int64
	totalMs float64
}

// stmtDelta is what one entry did in a window.
type stmtDelta struct {
	queryID int64
	calls   int64
	totalMs float64
}

// statementTracker turns successive pg_stat_statements snapshots into
// per-entry deltas. The first snapshot is the baseline.
type statementTracker struct {
	prev     map[stmtKey]stmtRow // nil: no baseline
	reset    time.Time           // pg_stat_statements_info.stats_reset (PostgreSQL 14+)
	hasReset bool
}

// update takes a snapshot and returns what happened since the previous
// one; fullReset says pg_stat_statements_reset() emptied the view in
// between (statsReset changed), so the calls between the previous poll and
// the reset are lost. No delta is ever negative:
//   - an entry that is new since the previous poll was created in the
//     window (or re-created after deallocation or a reset): all of its
//     counts are the window's;
//   - an entry whose counters went backwards was reset or deallocated and
//     re-created in the window: its current counts are the window's;
//   - after a full reset every entry restarted: its counts are the
//     window's.
func (t *statementTracker) update(rows []stmtRow, statsReset *time.Time) (deltas []stmtDelta, fullReset bool) {
	cur := make(map[stmtKey]stmtRow, len(rows))
	for _, r := range rows {
		cur[r.key] = r
	}
	baseline := t.prev == nil
	if statsReset != nil {
		fullReset = t.hasReset && !statsReset.Equal(t.reset)
		t.reset, t.hasReset = *statsReset, true
	}
	prev := t.prev
	t.prev = cur
	if baseline {
		return nil, false
	}
	for _, r := range rows {
		d := stmtDelta{queryID: r.key.queryID, calls: r.calls, totalMs: r.totalMs}
		if p, ok := prev[r.key]; ok && !fullReset && r.calls >= p.calls && r.totalMs >= p.totalMs {
			d.calls -= p.calls
			d.totalMs -= p.totalMs
		}
		if d.calls > 0 {
			deltas = append(deltas, d)
		}
	}
	return deltas, fullReset
}

// forget drops the baseline (after a failed poll: the next snapshot is a
// new baseline, so that one window never gets the calls of several).
func (t *statementTracker) forget() { t.prev = nil }

// statementMeans groups the deltas by series name (entries of several
// users or databases with the same text share one), keeps the limit
// series with the most time, sums the rest into OtherStatementsMean, and
// adds AllStatementsMean (emitted even when nothing ran, so the line reads
// zero rather than missing).
func statementMeans(deltas []stmtDelta, name func(queryID int64) string, limit int) []stream.SeriesMean {
	byName := map[string]*stream.SeriesMean{}
	all := stream.SeriesMean{Key: stream.Key{Event: AllStatementsMean}, Unit: hist.Millisecond}
	for _, d := range deltas {
		ev := StatementMeanPrefix + name(d.queryID)
		m := byName[ev]
		if m == nil {
			m = &stream.SeriesMean{Key: stream.Key{Event: ev}, Unit: hist.Millisecond}
			byName[ev] = m
		}
		m.Count += float64(d.calls)
		m.Sum += d.totalMs
		all.Count += float64(d.calls)
		all.Sum += d.totalMs
	}
	list := make([]stream.SeriesMean, 0, len(byName))
	for _, m := range byName {
		list = append(list, *m)
	}
	slices.SortFunc(list, func(a, b stream.SeriesMean) int {
		if c := cmp.Compare(b.Sum, a.Sum); c != 0 {
			return c
		}
		return cmp.Compare(a.Key.Event, b.Key.Event)
	})
	out := make([]stream.SeriesMean, 0, min(len(list), limit)+2)
	other := stream.SeriesMean{Key: stream.Key{Event: OtherStatementsMean}, Unit: hist.Millisecond}
	for i, m := range list {
		if i < limit {
			out = append(out, m)
			continue
		}
		other.Count += m.Count
		other.Sum += m.Sum
	}
	if other.Count > 0 {
		out = append(out, other)
	}
	return append(out, all)
}

// statementName is the series name of a query text (normalised like the
// log's statements), or of a queryid whose text is unknown.
func statementName(queryID int64, text string, known bool) string {
	if !known || text == "" {
		return "queryid " + strconv.FormatInt(queryID, 10)
	}
	return Normalize(text)
}

// dbRow is pg_stat_database's I/O counters for one database.
type dbRow struct {
	datname  string
	blksRead int64
	readMs   float64
}

// databaseTracker turns pg_stat_database snapshots into block read means.
type databaseTracker struct {
	prev map[string]dbRow // nil: no baseline
}

// update returns the block read mean of each database since the previous
// snapshot. A database whose counters went backwards (pg_stat_reset) gets
// a new baseline and no value for this window: its reads since the reset
// cannot be told from the ones before.
func (t *databaseTracker) update(rows []dbRow) []stream.SeriesMean {
	cur := make(map[string]dbRow, len(rows))
	for _, r := range rows {
		cur[r.datname] = r
	}
	prev := t.prev
	t.prev = cur
	if prev == nil {
		return nil
	}
	var out []stream.SeriesMean
	for _, r := range rows {
		p, ok := prev[r.datname]
		if !ok || r.blksRead < p.blksRead || r.readMs < p.readMs {
			continue
		}
		out = append(out, stream.SeriesMean{Key: stream.Key{Event: BlockReadMean, Instance: r.datname},
			Count: float64(r.blksRead - p.blksRead), Sum: r.readMs - p.readMs, Unit: hist.Millisecond})
	}
	return out
}

func (t *databaseTracker) forget() { t.prev = nil }

// ioRow is one pg_stat_io row (PostgreSQL 16+). A nil counter is NULL:
// the operation does not apply to that backend type, object and context.
type ioRow struct {
	backendType, object, context string
	reads, writes, fsyncs        *int64
	readMs, writeMs, fsyncMs     *float64
}

// ioOp is one operation's count and time.
type ioOp struct {
	count int64
	ms    float64
}

// ioTotals is one backend type's operations summed over objects and
// contexts.
type ioTotals struct{ read, write, fsync ioOp }

func (o *ioOp) add(n *int64, ms *float64) {
	if n != nil {
		o.count += *n
	}
	if ms != nil {
		o.ms += *ms
	}
}

// ioTracker turns pg_stat_io snapshots into per backend type and
// operation means.
type ioTracker struct {
	prev map[string]ioTotals // nil: no baseline
}

// groupIO sums the rows per backend type.
func groupIO(rows []ioRow) map[string]ioTotals {
	out := map[string]ioTotals{}
	for _, r := range rows {
		t := out[r.backendType]
		t.read.add(r.reads, r.readMs)
		t.write.add(r.writes, r.writeMs)
		t.fsync.add(r.fsyncs, r.fsyncMs)
		out[r.backendType] = t
	}
	return out
}

// update returns, per backend type, the read, write and fsync means of
// the operations done since the previous snapshot (operations that did
// not happen are left out). A backend type whose counters went backwards
// (pg_stat_reset_shared('io')) gets a new baseline.
func (t *ioTracker) update(rows []ioRow) []stream.SeriesMean {
	cur := groupIO(rows)
	prev := t.prev
	t.prev = cur
	if prev == nil {
		return nil
	}
	types := make([]string, 0, len(cur))
	for bt := range cur {
		types = append(types, bt)
	}
	slices.Sort(types)
	var out []stream.SeriesMean
	for _, bt := range types {
		c, p := cur[bt], prev[bt]
		if _, ok := prev[bt]; !ok {
			continue // a backend type not in the baseline: its counts span more than the window
		}
		ops := []struct {
			event string
			c, p  ioOp
		}{{IOReadMean, c.read, p.read}, {IOWriteMean, c.write, p.write}, {IOFsyncMean, c.fsync, p.fsync}}
		if c.read.count < p.read.count || c.write.count < p.write.count || c.fsync.count < p.fsync.count ||
			c.read.ms < p.read.ms || c.write.ms < p.write.ms || c.fsync.ms < p.fsync.ms {
			continue
		}
		for _, op := range ops {
			if n := op.c.count - op.p.count; n > 0 {
				out = append(out, stream.SeriesMean{Key: stream.Key{Event: op.event, Instance: bt},
					Count: float64(n), Sum: op.c.ms - op.p.ms, Unit: hist.Millisecond})
			}
		}
	}
	return out
}

func (t *ioTracker) forget() { t.prev = nil }
