package fio

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// A histogram log line is "msec, ddir, bs, c0, c1, ..., cN-1" with N =
// 1856 >> log_hist_coarseness: the bins' counts for the window that ended
// msec milliseconds after the job started, since the direction's previous
// line (fio 3.33 iolog.c flush_hist_samples). fio samples on I/O
// completions, so windows are about log_hist_msec long, and it writes no
// line for the last, partial window of a job. bs is the block size of the
// I/O that closed the window, not a partition of the counts.
const histHeaderCols = 3

// maxHistLine bounds one line: 1859 columns of 20-digit counts.
const maxHistLine = 1 << 20

// ddirNames are fio's data directions as logged (0 read, 1 write, 2 trim).
var ddirNames = [...]string{"read", "write", "trim"}

// DetectHistLog says Yes when the first line is a complete fio histogram
// log line, NeedMore while it may still become one, No otherwise.
func DetectHistLog(prefix []byte) input.Verdict {
	line, _, complete := bytes.Cut(prefix, []byte("\n"))
	if !complete {
		if len(line) > maxHistLine || !plausibleHistPrefix(line) {
			return input.No
		}
		return input.NeedMore
	}
	if _, reason := parseHistLine(bytes.TrimRight(line, "\r"), nil); reason != "" {
		return input.No
	}
	return input.Yes
}

// plausibleHistPrefix reports whether an incomplete first line can still
// become a histogram log line: digits, commas and spaces, starting with a
// digit.
func plausibleHistPrefix(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	if b[0] < '0' || b[0] > '9' {
		return false
	}
	for _, c := range b {
		if (c < '0' || c > '9') && c != ',' && c != ' ' {
			return false
		}
	}
	return true
}

// histLine is one parsed line.
type histLine struct {
	ms     uint64
	ddir   int
	counts []float64 // one per coarse bin
}

// parseHistLine parses a line into counts (reusing its storage); reason
// says why the line is not a histogram log line.
func parseHistLine(b []byte, counts []float64) (histLine, string) {
	var l histLine
	col := 0
	counts = counts[:0]
	for len(b) > 0 || col == 0 {
		field := b
		if i := bytes.IndexByte(b, ','); i >= 0 {
			field, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		v, ok := input.ParseUint(bytes.TrimSpace(field))
		if !ok {
			return l, fmt.Sprintf("column %d is not a whole number", col+1)
		}
		switch col {
		case 0:
			l.ms = v
		case 1:
			if v >= uint64(len(ddirNames)) {
				return l, fmt.Sprintf("data direction %d is not 0 (read), 1 (write) or 2 (trim)", v)
			}
			l.ddir = int(v)
		case 2: // block size: not a partition of the counts
		default:
			counts = append(counts, float64(v))
		}
		col++
	}
	if coarsenessOf(len(counts)) < 0 {
		return l, fmt.Sprintf("%d bin counts, not 1856/2^c for a log_hist_coarseness c in 0..6", len(counts))
	}
	l.counts = counts
	return l, ""
}

// OpenHistLog returns a Source over a fio histogram log.
func OpenHistLog(in source.Input, opts source.Options) (source.Source, error) {
	return source.NewInputSource(in, func(ctx context.Context, emit func(stream.Interval) error) error {
		return runHistLog(ctx, in, opts, emit)
	})
}

// runHistLog reads the log. A regular file is read to its end first, so
// that its windows can be placed on the wall clock (see HistLogFormat);
// stdin and --follow stream relative times.
func runHistLog(ctx context.Context, in source.Input, opts source.Options, emit func(stream.Interval) error) error {
	anchored := !opts.Follow && !in.ModTime.IsZero()
	p := &histParser{
		name:       in.Name,
		diag:       in.Diag,
		opts:       opts,
		cumulative: opts.Counts.Resolve(source.CountsInterval) == source.CountsCumulative,
		coarseness: -1,
		out:        &windowEmitter{name: in.Name, emit: emit},
	}
	if !anchored {
		p.out.relative = true
	}
	err := input.EachLine(ctx, in.Name, in.Reader, maxHistLine, func(n int, text string, tooLong bool) error {
		if tooLong {
			p.diag.Malformed(p.name, n, fmt.Sprintf("line longer than %d bytes", maxHistLine))
			return nil
		}
		return p.line(n, []byte(text), anchored)
	})
	if err != nil {
		return err
	}
	if anchored {
		return p.emitAnchored(in.ModTime)
	}
	return p.out.flush()
}

// sparseBins holds the non-zero counts of one window: coarse bin indexes
// and counts. Buffered windows take this much instead of 1856 floats.
type sparseBins struct {
	idx []int32
	n   []float64
}

// record is one direction's window.
type record struct {
	from, to   uint64 // ms since the job start
	ddir       int
	gap        bool
	bins       sparseBins
	coarseness int
}

// histParser turns lines into per-direction windows.
type histParser struct {
	name       string
	diag       *input.Diagnostics
	opts       source.Options
	cumulative bool
	coarseness int
	prevMs     [len(ddirNames)]uint64
	prevCum    [len(ddirNames)][]float64 // cumulative mode: last snapshot
	counts     []float64
	bounds     boundsCache
	buffered   []record
	lastMs     uint64
	warnedTop  bool
	// warnedSameMs: a window at the previous one's millisecond was seen.
	warnedSameMs bool
	out          *windowEmitter
}

// line handles line n.
func (p *histParser) line(n int, text []byte, buffer bool) error {
	if len(bytes.TrimSpace(text)) == 0 {
		return nil
	}
	l, reason := parseHistLine(text, p.counts)
	p.counts = l.counts[:0]
	if reason != "" {
		p.diag.Malformed(p.name, n, reason)
		return nil
	}
	c := coarsenessOf(len(l.counts))
	if p.coarseness < 0 {
		p.coarseness = c
	} else if c != p.coarseness {
		p.diag.Malformed(p.name, n, fmt.Sprintf("%d bins, but the first line had %d", len(l.counts), platNR>>p.coarseness))
		return nil
	}
	from := p.prevMs[l.ddir]
	if l.ms == from && from > 0 {
		// fio's log thread, behind under load, can write two windows of a
		// direction in one millisecond: the second is kept, 1 ms later.
		if !p.warnedSameMs {
			p.warnedSameMs = true
			p.diag.Warn(p.name, "line %d: a second %s window at %d ms (fio logged late); placed 1 ms later", n, ddirNames[l.ddir], l.ms)
		}
		l.ms++
	}
	if l.ms <= from {
		p.diag.Malformed(p.name, n, fmt.Sprintf("time %d ms does not advance past the %s window that ended at %d ms", l.ms, ddirNames[l.ddir], from))
		return nil
	}
	p.prevMs[l.ddir] = l.ms
	p.lastMs = max(p.lastMs, l.ms)
	rec := record{from: from, to: l.ms, ddir: l.ddir, coarseness: c}
	rec.bins, rec.gap = p.delta(l)
	if !p.opts.KeepEvent(ddirNames[l.ddir] + " clat") {
		rec.bins = sparseBins{} // an observed window without the series
	}
	if !rec.gap && rec.bins.has(len(l.counts)-1) && !p.warnedTop {
		p.warnedTop = true
		p.diag.Warn(p.name, "I/Os in fio's last bin, which also holds every latency above %s; read as that bin's range",
			hist.FormatDuration(topEdgeNs))
	}
	if buffer {
		p.buffered = append(p.buffered, rec)
		return nil
	}
	return p.out.add(stream.RelativeStart, rec, p.histogram)
}

// delta returns the window's counts: the line itself, or in cumulative mode
// its difference from the direction's previous line (gap when a count went
// backwards: a new baseline, never negative counts).
func (p *histParser) delta(l histLine) (sparseBins, bool) {
	var out sparseBins
	if !p.cumulative {
		for i, c := range l.counts {
			if c != 0 {
				out.idx, out.n = append(out.idx, int32(i)), append(out.n, c)
			}
		}
		return out, false
	}
	prev := p.prevCum[l.ddir]
	if len(prev) != len(l.counts) {
		prev = make([]float64, len(l.counts))
	}
	gap := false
	for i, c := range l.counts {
		d := c - prev[i]
		if d < 0 {
			gap = true
		}
		if d > 0 {
			out.idx, out.n = append(out.idx, int32(i)), append(out.n, d)
		}
	}
	p.prevCum[l.ddir] = append(prev[:0], l.counts...)
	if gap {
		return sparseBins{}, true
	}
	return out, false
}

// has reports whether coarse bin i has a count.
func (b sparseBins) has(i int) bool {
	n := len(b.idx)
	return n > 0 && int(b.idx[n-1]) == i
}

// histogram builds the window's histogram on fio's (coarse) bins.
func (p *histParser) histogram(r record) *hist.Histogram {
	h, err := hist.NewCustom(hist.Nanosecond, p.bounds.get(r.coarseness))
	if err != nil {
		return nil
	}
	for j, i := range r.bins.idx {
		_ = h.AddCustom(int(i)-1, r.bins.n[j])
	}
	return h
}

// emitAnchored places the buffered windows so that the last one ends at the
// file's modification time, fio's log having times since the job start only.
func (p *histParser) emitAnchored(mod time.Time) error {
	if len(p.buffered) == 0 {
		return nil
	}
	origin := mod.In(p.opts.Loc()).Add(-time.Duration(p.lastMs) * time.Millisecond)
	p.diag.Warn(p.name, "fio histogram logs count ms from the job start: the job is placed to start at %s, "+
		"so that the last line ends at the file's modification time (wrong if the file was copied without keeping it)",
		origin.Format("2006-01-02 15:04:05.000 -07:00"))
	for _, r := range p.buffered {
		if err := p.out.add(origin, r, p.histogram); err != nil {
			return err
		}
	}
	return p.out.flush()
}

// windowEmitter gathers consecutive records of the same window (several
// directions sampled together) into one interval.
type windowEmitter struct {
	name     string
	emit     func(stream.Interval) error
	relative bool
	pending  *stream.Interval
	from, to uint64
}

// add adds a record at origin + its window.
func (w *windowEmitter) add(origin time.Time, r record, build func(record) *hist.Histogram) error {
	if w.pending != nil && (w.from != r.from || w.to != r.to || r.gap != w.pending.Gap) {
		if err := w.flush(); err != nil {
			return err
		}
	}
	if w.pending == nil {
		w.pending = &stream.Interval{
			Source:   w.name,
			Start:    origin.Add(time.Duration(r.from) * time.Millisecond),
			Duration: time.Duration(r.to-r.from) * time.Millisecond,
			Relative: w.relative,
			Gap:      r.gap,
		}
		w.from, w.to = r.from, r.to
	}
	if r.gap {
		return nil
	}
	h := build(r)
	if h == nil || h.Count() == 0 {
		return nil
	}
	key := stream.Key{Event: ddirNames[r.ddir] + " clat"}
	w.pending.Series = mergeSeries(w.pending.Series, []stream.SeriesHist{{Key: key, Hist: h}})
	return nil
}

// flush emits the pending interval.
func (w *windowEmitter) flush() error {
	if w.pending == nil {
		return nil
	}
	iv := *w.pending
	w.pending = nil
	return w.emit(iv)
}
