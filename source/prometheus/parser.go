package prometheus

import (
	"fmt"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

const (
	// defaultInterval is the time between scrapes that carry no timestamps
	// when --interval is not given (Prometheus' default scrape interval).
	defaultInterval = 15 * time.Second
	// relativeBefore: sample timestamps before 2000-01-01 are read as time
	// since the start (latscope writes relative streams so), not as dates.
	relativeBefore = int64(946684800000)
	// maxDelta is the longest believable time between two scrapes.
	maxDelta = 366 * 24 * time.Hour
)

// seriesState is what is remembered of one series between scrapes.
type seriesState struct {
	layout layout
	last   *raw // the last scrape's counts, to re-express on a wider layout
	unit   hist.Unit
}

// parser splits the input into scrapes and scrapes into intervals.
type parser struct {
	name string
	diag *input.Diagnostics
	opts source.Options
	emit func(stream.Interval) error

	cumulative bool
	interval   time.Duration
	types      map[string]string // family → TYPE kind
	cur        block
	series     map[stream.Key]*seriesState
	differ     *stream.Differ
	once       *input.OnceWarnings

	scrapes  int  // scrapes turned into snapshots
	stamped  bool // the stream is timed by sample timestamps
	relative bool
	prevAt   time.Time
}

func newParser(in source.Input, opts source.Options, emit func(stream.Interval) error) *parser {
	p := &parser{name: in.Name, diag: in.Diag, opts: opts, emit: emit,
		cumulative: opts.Counts.Resolve(source.CountsCumulative) == source.CountsCumulative,
		interval:   opts.Interval, types: map[string]string{}, series: map[stream.Key]*seriesState{},
		differ: stream.NewDiffer(in.Name), once: input.NewOnceWarnings(in.Diag, in.Name)}
	if p.interval <= 0 {
		p.interval = defaultInterval
	}
	return p
}

// line handles input line n.
func (p *parser) Line(n int, text string, tooLong bool) error {
	if tooLong {
		p.diag.Malformed(p.name, n, fmt.Sprintf("line longer than %d bytes", maxLineLen))
		return nil
	}
	sc := scanLine(text)
	switch sc.kind {
	case lineBad:
		p.diag.Malformed(p.name, n, sc.reason)
	case lineType, lineHelp:
		if sc.kind == lineType {
			p.types[sc.name] = sc.typ
		}
		// A scrape repeating its header starts a new block.
		if p.cur.famSeen[sc.name] {
			return p.flush()
		}
	case lineSample:
		fam := histogramFamily(sc.name, func(f string) bool { return p.types[f] == "histogram" })
		if fam == "" {
			return nil // other metric types, untyped samples
		}
		if p.cur.startsNew(sc) {
			if err := p.flush(); err != nil {
				return err
			}
		}
		p.cur.add(n, text, fam, sc)
	}
	return nil
}

// flush turns the current block into a snapshot and emits its interval.
func (p *parser) flush() error {
	b := p.cur
	p.cur = block{}
	if b.empty() {
		return nil
	}
	mfs, problems := b.parse()
	for _, pr := range problems {
		p.diag.Malformed(p.name, pr.line, pr.reason)
	}
	if mfs == nil {
		return nil
	}
	var snap []stream.SeriesHist
	for _, fam := range b.families {
		mf := mfs[fam]
		if mf == nil {
			continue
		}
		unit, latency := familyUnit(fam, p.fallbackUnit())
		if !latency && (len(p.opts.Events) == 0 || !p.opts.KeepEvent(fam)) {
			if len(p.opts.Events) == 0 {
				p.once.Warn("unit "+fam, "histogram %s is not in a time unit; skipped (name it with --event to read it as latency in --unit)", fam)
			}
			continue
		}
		for _, m := range mf.GetMetric() {
			key := seriesKey(fam, m)
			if !p.opts.KeepEvent(key.Event) {
				continue
			}
			s, err := p.seriesHist(key, unit, m, b.firstLine())
			if err != nil {
				return err
			}
			if s != nil {
				snap = append(snap, *s)
			}
		}
	}
	return p.snapshot(b, snap)
}

func (p *parser) fallbackUnit() hist.Unit {
	if p.opts.Unit != 0 {
		return p.opts.Unit
	}
	return hist.Second
}

// seriesHist reads one series of a scrape onto its layout, widening the
// layout (and re-expressing the previous scrape on it) when new edges
// appear. A series with unusable buckets is reported and left out.
func (p *parser) seriesHist(key stream.Key, unit hist.Unit, m *dto.Metric, line int) (*stream.SeriesHist, error) {
	r, reason := rawOf(m.GetHistogram())
	if reason != "" {
		p.diag.Malformed(p.name, line, fmt.Sprintf("scrape at line %d: series %s: %s; left out", line, key, reason))
		return nil, nil
	}
	st := p.series[key]
	if st == nil {
		st = &seriesState{unit: unit}
		p.series[key] = st
	}
	if st.layout.grow(&r) && st.last != nil && p.cumulative {
		// The previous scrape, on the wider layout, is the baseline.
		prev, err := st.layout.histogram(st.last, st.unit)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: series %s: %w", p.name, line, key, err)
		}
		p.differ.Rebase(key, prev)
	}
	st.last = &r
	h, err := st.layout.histogram(&r, st.unit)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: series %s: %w", p.name, line, key, err)
	}
	return &stream.SeriesHist{Key: key, Hist: h}, nil
}

// snapshot places a scrape in time and emits the interval it closes.
func (p *parser) snapshot(b block, snap []stream.SeriesHist) error {
	at, ok := p.when(b)
	if !ok {
		return nil
	}
	first := p.scrapes == 0
	p.scrapes++
	var d time.Duration
	if !first {
		d = at.Sub(p.prevAt)
	}
	p.prevAt = at
	if !p.cumulative {
		if first {
			d = p.interval
		}
		return p.emit(stream.Interval{Source: p.name, Start: at.Add(-d), Duration: d, Relative: p.relative, Series: nonEmpty(snap)})
	}
	iv, ok, err := p.differ.Next(at, d, p.relative, snap)
	if err != nil {
		return fmt.Errorf("%s:%d: %w", p.name, b.firstLine(), err)
	}
	if !ok {
		return nil
	}
	return p.emit(iv)
}

// when returns a scrape's time: its sample timestamp, else (or when the
// stream has none) the previous scrape's time plus the interval. ok is
// false for a scrape whose timestamp does not advance: it is a new baseline.
func (p *parser) when(b block) (time.Time, bool) {
	if p.scrapes == 0 {
		p.stamped = b.hasTS
		switch {
		case !b.hasTS:
			p.relative = true
			p.once.Warn("interval", "scrapes carry no sample timestamps; assuming %s between them (set --interval)", p.interval)
			return stream.RelativeStart, true
		case b.ts < relativeBefore:
			p.relative = true
		}
		return time.UnixMilli(b.ts).In(p.loc()), true
	}
	if !p.stamped || !b.hasTS {
		if p.stamped {
			p.once.Warn("nots", "scrape at line %d has no sample timestamps; placing it %s after the previous one", b.firstLine(), p.interval)
		}
		return p.prevAt.Add(p.interval), true
	}
	at := time.UnixMilli(b.ts).In(p.loc())
	if !at.After(p.prevAt) || at.Sub(p.prevAt) > maxDelta {
		p.once.Warn("back", "scrape at line %d is not later than the previous one, or more than a year after it; starting a new baseline", b.firstLine())
		p.differ = stream.NewDiffer(p.name)
		p.scrapes = 0
		p.prevAt = at
		return at, true
	}
	return at, true
}

func (p *parser) loc() *time.Location {
	if p.relative {
		return time.UTC
	}
	return p.opts.Loc()
}

func nonEmpty(ss []stream.SeriesHist) []stream.SeriesHist {
	out := ss[:0]
	for _, s := range ss {
		if s.Hist.Count() > 0 {
			out = append(out, s)
		}
	}
	return out
}

// finish flushes the last scrape.
func (p *parser) finish() error { return p.flush() }

// End finishes the input (see input.LineParser).
func (p *parser) End(bool) error { return p.finish() }
