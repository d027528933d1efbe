package oracle

import (
	"fmt"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/source/oracle10046"
	"github.com/latscope/latscope/stream"
)

// waitColumns are the columns mapWaits reads (both history queries).
var waitColumns = []string{"SID", "SERIAL", "EVENT", "WAIT_TIME_MICRO", "P1", "P2", "P3"}

// mapWaits reads X$KSLWH rows (WAIT_ID) or V$SESSION_WAIT_HISTORY rows
// (POSITION, WAIT_SEQ, STATE). Rows with a non-numeric field are skipped and
// counted in bad.
func mapWaits(r *rows) (ws []swhRow, bad int, err error) {
	idx := map[string]int{}
	for _, c := range append(waitColumns, "WAIT_ID", "POSITION", "WAIT_SEQ", "STATE", "INST_ID") {
		idx[c] = r.col(c)
	}
	for _, c := range waitColumns {
		if idx[c] < 0 {
			return nil, 0, fmt.Errorf("the wait history query returned no %s column", c)
		}
	}
	kslwh := idx["WAIT_ID"] >= 0
	if !kslwh && (idx["POSITION"] < 0 || idx["WAIT_SEQ"] < 0) {
		return nil, 0, fmt.Errorf("the wait history query returned neither WAIT_ID nor POSITION and WAIT_SEQ")
	}
	num := func(v []any, c string, ok *bool) int64 {
		if idx[c] < 0 {
			return 0
		}
		n, good := asInt(v[idx[c]])
		*ok = *ok && good
		return n
	}
	for _, v := range r.values {
		ok := true
		w := swhRow{waitRow: waitRow{
			inst: num(v, "INST_ID", &ok), sid: num(v, "SID", &ok), serial: num(v, "SERIAL", &ok),
			event: asString(v[idx["EVENT"]]), micros: num(v, "WAIT_TIME_MICRO", &ok),
			p1: num(v, "P1", &ok), p2: num(v, "P2", &ok), p3: num(v, "P3", &ok),
		}}
		if kslwh {
			w.id = num(v, "WAIT_ID", &ok)
		} else {
			w.position, w.waitSeq = num(v, "POSITION", &ok), num(v, "WAIT_SEQ", &ok)
			w.waiting = idx["STATE"] >= 0 && strings.EqualFold(asString(v[idx["STATE"]]), "WAITING")
		}
		if !ok || w.event == "" || w.micros < 0 {
			bad++
			continue
		}
		ws = append(ws, w)
	}
	return ws, bad, nil
}

// waitCollector turns de-duplicated waits into per-interval exact
// histograms, one series per event (the selected sessions are one group).
type waitCollector struct {
	keep     func(string) bool
	instance string
	// onBlockRead receives the block reads (source.Options.BlockReads):
	// At, the end of the poll that found the wait, is their time (the wait
	// ended between the previous poll and it).
	onBlockRead stream.BlockReads
	series      map[string]*hist.Histogram
	order       []string
	waits       int64
}

func (c *waitCollector) add(ws []waitRow, at time.Time) {
	if c.series == nil {
		c.series = map[string]*hist.Histogram{}
	}
	for _, w := range ws {
		if c.keep != nil && !c.keep(w.event) {
			continue
		}
		h := c.series[w.event]
		if h == nil {
			h = hist.NewExact(hist.Microsecond, -10)
			c.series[w.event] = h
			c.order = append(c.order, w.event)
		}
		if err := h.Record(float64(w.micros)); err != nil {
			continue
		}
		c.waits++
		if c.onBlockRead != nil {
			if r, ok := oracle10046.BlockRead(w.event, w.p1, w.p2, w.p3); ok {
				r.Micros, r.Time = w.micros, at
				c.onBlockRead(r)
			}
		}
	}
}

// interval returns the waits collected since the last call as [start, end).
func (c *waitCollector) interval(source string, start, end time.Time) stream.Interval {
	iv := stream.Interval{Source: source, Start: start, Duration: end.Sub(start)}
	for _, ev := range c.order {
		iv.Series = append(iv.Series, stream.SeriesHist{Key: stream.Key{Event: ev, Instance: c.instance}, Hist: c.series[ev]})
	}
	c.series, c.order = nil, nil
	return iv
}
