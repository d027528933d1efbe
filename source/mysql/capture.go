package mysql

import (
	"fmt"
	"sort"
	"strings"

	"github.com/latscope/latscope/stream"
)

// Capture classes: what the server counts alike.
const (
	classWaits      = "waits"
	classTableIO    = "table I/O"
	classTableLocks = "table locks"
	classStatements = "statements"
)

// classes in the order the report lists them.
var classes = []string{classWaits, classTableIO, classTableLocks, classStatements}

// classOf returns an instrument's capture class.
func classOf(name string) string {
	switch {
	case strings.HasPrefix(name, "statement/"):
		return classStatements
	case strings.HasPrefix(name, "wait/io/table/"):
		return classTableIO
	case strings.HasPrefix(name, "wait/lock/table/"):
		return classTableLocks
	}
	return classWaits
}

// lowCapture is the capture ratio below which the advice looks for a cause.
const lowCapture = 0.95

// seenCount is what one window's history rows held of one instrument:
// events, and units as the server counts them (rows for table I/O).
type seenCount struct{ units, events int64 }

// plus returns c with one more event of units.
func (c seenCount) plus(units int64) seenCount {
	return seenCount{c.units + units, c.events + 1}
}

// tally is one instrument over the windows whose counts could be used.
type tally struct {
	seen, counted, events int64
	// ended and open make up edge(), the most by which seen can exceed
	// counted: the units found by the closing poll of every window after
	// which the comparison stopped (the last compared window so far, each
	// one followed by a window whose counts were left out or by a gap).
	// Events written while a closing poll scans the ring are seen in its
	// window and counted in the next; between compared windows that
	// cancels out, at such an end it cannot. ended holds the ends passed,
	// open the closing poll of the last window compared.
	ended, open int64
}

// edge returns the most by which seen can exceed counted.
func (t tally) edge() int64 { return t.ended + t.open }

// ringTally follows one history ring over the run.
type ringTally struct {
	table string
	size  int
	// sizeVariable is the server variable that sizes the ring.
	sizeVariable                string
	polls, rows, idle, overruns int64
}

// captureStats accumulates the capture of a run.
type captureStats struct {
	instruments map[string]*tally
	windows     int
	leftOut     map[string]int // windows per class
	ratios      []float64      // the waits' ratio per window
	// maxBatch is the most rows one table I/O event fetched; batch the
	// table I/O rows and events seen in every window, compared or not.
	maxBatch int64
	batch    seenCount
	rings    [2]ringTally // waits, statements
}

func newCaptureStats() captureStats {
	return captureStats{instruments: map[string]*tally{}, leftOut: map[string]int{}}
}

// add compares one window's history rows with the server's counts; edge
// is the part of seen that the window's closing poll found.
func (c *captureStats) add(seen, edge map[string]seenCount, wc windowCounts) {
	c.windows++
	for name, sc := range seen {
		if countsInRows(name) {
			c.batch.units += sc.units
			c.batch.events += sc.events
		}
	}
	names := map[string]bool{}
	for n := range wc.back {
		names[n] = true
	}
	for n := range seen {
		names[n] = true
	}
	for _, s := range []summary{wc.waits, wc.stmts} {
		for n := range s {
			names[n] = true
		}
	}
	for name, t := range c.instruments {
		if !names[name] { // nothing seen nor counted: no edge either
			t.open = 0
		}
	}
	left := map[string]bool{}
	var wSeen, wCounted int64
	for name := range names {
		cls := classOf(name)
		if !wc.usable(name) {
			left[cls] = true
			if t := c.instruments[name]; t != nil {
				t.ended += t.open
				t.open = 0
			}
			continue
		}
		counted := int64(wc.waits[name].n + wc.stmts[name].n)
		t := c.instruments[name]
		if t == nil {
			t = &tally{}
			c.instruments[name] = t
		}
		t.seen += seen[name].units
		t.events += seen[name].events
		t.counted += counted
		t.open = edge[name].units
		if cls != classStatements {
			wSeen += seen[name].units
			wCounted += counted
		}
	}
	for cls := range left {
		c.leftOut[cls]++
	}
	if wCounted > 0 {
		c.ratios = append(c.ratios, float64(wSeen)/float64(wCounted))
	}
}

// gap notes a window that was not compared at all (the connection was
// lost): the comparison of every instrument stopped before it.
func (c *captureStats) gap() {
	for _, t := range c.instruments {
		t.ended += t.open
		t.open = 0
	}
}

// class sums the instruments of one class.
func (c *captureStats) class(cls string) (t tally, any bool) {
	for name, it := range c.instruments {
		if classOf(name) == cls {
			t.seen += it.seen
			t.counted += it.counted
			t.events += it.events
			t.ended += it.edge()
			any = true
		}
	}
	return t, any
}

func ratio(seen, counted int64) *float64 {
	if counted <= 0 {
		return nil
	}
	r := float64(seen) / float64(counted)
	return &r
}

// fill adds the capture figures and the advice to st.
func (c *captureStats) fill(st *stream.SamplerStats) {
	var all tally
	for _, cls := range classes {
		t, any := c.class(cls)
		if !any && c.leftOut[cls] == 0 {
			continue
		}
		cp := stream.Capture{What: cls, Unit: "events", Seen: t.seen, Counted: t.counted, Ratio: ratio(t.seen, t.counted),
			Windows: c.windows - c.leftOut[cls], LeftOut: c.leftOut[cls]}
		if cls == classTableIO {
			cp.Unit, cp.Events = "rows", t.events
		}
		st.Captures = append(st.Captures, cp)
		if cls != classStatements {
			all.seen += t.seen
			all.counted += t.counted
		}
	}
	st.CaptureRatio = ratio(all.seen, all.counted)
	if st.CaptureRatio != nil {
		st.Missed = max(all.counted-all.seen, 0)
	}
	for _, r := range c.rings {
		if r.table != "" && r.size > 0 {
			st.Rings = append(st.Rings, stream.Ring{Table: r.table, Size: r.size, Polls: r.polls, Rows: r.rows,
				IdleRows: r.idle, Overruns: r.overruns})
		}
	}
	st.Advice = c.advice(st)
}

// advice names what limited the capture, and what the figures mean.
func (c *captureStats) advice(st *stream.SamplerStats) []string {
	var out []string
	for _, r := range c.rings {
		if r.overruns > 0 {
			out = append(out, r.overrunAdvice())
		}
	}
	byClass := map[string]stream.Capture{}
	for _, cp := range st.Captures {
		byClass[cp.What] = cp
	}
	if c.maxBatch > 1 {
		exact := fmt.Sprintf(", its \"%s\" series the time per row, and its capture compares rows with rows", summaryRowMeanPrefix+"wait/io/table/sql/handler")
		if cp := byClass[classTableIO]; cp.Windows == 0 {
			exact = ""
		}
		out = append(out, fmt.Sprintf("table I/O is counted in rows: one wait/io/table event covers a batch of rows (here %d events fetched %d rows, up to %d in one), "+
			"so its histogram is the latency of a batch%s", c.batch.events, c.batch.units, c.maxBatch, exact))
	}
	for _, cls := range []string{classTableIO, classTableLocks} {
		if cp, ok := byClass[cls]; ok && cp.LeftOut > 0 {
			out = append(out, leftOutAdvice(cls, cp.LeftOut, c.windows))
		}
	}
	if advice := c.lossAdvice(st); advice != "" {
		out = append(out, advice)
	}
	return out
}

// leftOutAdvice explains the windows whose table counts could not be used.
func leftOutAdvice(cls string, leftOut, windows int) string {
	covers := fmt.Sprintf("The %s capture covers the other windows.", cls)
	if leftOut == windows {
		covers = fmt.Sprintf("The %s capture is therefore unknown; the other captures are not affected.", cls)
	}
	return fmt.Sprintf("%s counts were left out of %d of %d windows: tables were dropped, renamed or rebuilt (DROP, ALTER, TRUNCATE, ...), "+
		"which takes their counts out of the server's summary. %s", cls, leftOut, windows, covers)
}

// lossAdvice explains a low capture that no ring overrun explains.
func (c *captureStats) lossAdvice(st *stream.SamplerStats) string {
	overran := false
	for _, r := range c.rings {
		overran = overran || r.overruns > 0
	}
	if overran {
		return ""
	}
	var low []string
	for _, cp := range st.Captures {
		if cp.Ratio != nil && *cp.Ratio < lowCapture {
			low = append(low, fmt.Sprintf("%s %.3f", cp.What, *cp.Ratio))
		}
	}
	if len(low) == 0 {
		return ""
	}
	return fmt.Sprintf("capture %s, yet no poll found a ring overrun, so a bigger ring would not help: the server counted events that never reached the history%s",
		strings.Join(low, ", "), c.worstInstrument())
}

// worstInstrument names the instrument with the most events counted but
// not seen, as " (mostly NAME: seen S of C)".
func (c *captureStats) worstInstrument() string {
	names := make([]string, 0, len(c.instruments))
	for n := range c.instruments {
		names = append(names, n)
	}
	sort.Strings(names)
	worst, most := "", int64(0)
	for _, n := range names {
		if t := c.instruments[n]; t.counted-t.seen > most {
			worst, most = n, t.counted-t.seen
		}
	}
	if worst == "" {
		return ""
	}
	t := c.instruments[worst]
	return fmt.Sprintf(" (mostly %s: seen %d of %d)", worst, t.seen, t.counted)
}

// ringTallyFor returns t for a ring of this table and size, keeping its
// counts (a reconnect reads the size again).
func ringTallyFor(t ringTally, table string, size int, variable string) ringTally {
	t.table, t.size, t.sizeVariable = table, size, variable
	return t
}

// overrunAdvice says a ring overran, and what to change.
func (r ringTally) overrunAdvice() string {
	head := fmt.Sprintf("%s (%d rows) overran in %d of %d polls: events were lost between polls", r.table, r.size, r.overruns, r.polls)
	if r.rows > 0 && 4*r.idle >= r.rows {
		return fmt.Sprintf("%s; idle waits were %.0f %% of its rows: they fill the ring without being latencies, so disable them first "+
			"(UPDATE performance_schema.setup_instruments SET ENABLED = 'NO' WHERE NAME = 'idle'), then raise %s (a startup option) if overruns remain",
			head, 100*float64(r.idle)/float64(r.rows), r.sizeVariable)
	}
	return fmt.Sprintf("%s; raise %s (a startup option, e.g. %d) or poll a less busy server", head, r.sizeVariable, 10*r.size)
}
