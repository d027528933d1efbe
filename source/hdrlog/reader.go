package hdrlog

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// maxLine bounds one line: a V2 payload of the widest 5-digit histogram
// stays far below it.
const maxLine = 4 << 20

// maxHDRBytes bounds the counts array of one decoded histogram (an hour
// in ns at 5 significant digits takes 26 MiB): reading walks it.
const maxHDRBytes = 40 << 20

// yearNs is HdrHistogram's threshold between relative and absolute times
// (Java's HistogramLogReader): a timestamp more than a year before the
// StartTime is relative to it.
const yearNs = int64(365 * 24 * time.Hour)

// untagged names the series of lines without a tag.
const untagged = "(untagged)"

// reader turns log lines into intervals.
type reader struct {
	in   source.Input
	opts source.Options
	emit func(stream.Interval) error
	unit hist.Unit // the values' unit in logs not written by latscope

	latscope  bool      // the latscope marker was seen
	lsUnit    hist.Unit // the values' unit the marker declares
	startNs   int64
	hasStart  bool
	baseNs    int64
	hasBase   bool
	series    map[string]stream.Key
	grids     map[string]Grid
	pending   *Comment // hist comment for the next data line
	pendingAt int

	cur       *stream.Interval
	curMarked bool // opened by an interval comment
	curTs     int64
	curLen    int64
	differ    *stream.Differ
	once      *input.OnceWarnings
}

func newReader(in source.Input, opts source.Options, emit func(stream.Interval) error) *reader {
	r := &reader{in: in, opts: opts, emit: emit, unit: hist.Nanosecond, lsUnit: hist.Nanosecond,
		series: map[string]stream.Key{}, grids: map[string]Grid{}, once: input.NewOnceWarnings(in.Diag, in.Name)}
	if opts.Unit.Valid() {
		r.unit = opts.Unit
	}
	if opts.Counts.Resolve(source.CountsInterval) == source.CountsCumulative {
		r.differ = stream.NewDiffer(in.Name)
	}
	return r
}

func (r *reader) run(ctx context.Context) error {
	err := input.EachLine(ctx, r.in.Name, r.in.Reader, maxLine, func(n int, text string, tooLong bool) error {
		if tooLong {
			r.malformed(n, fmt.Sprintf("line longer than %d bytes", maxLine))
			return nil
		}
		return r.line(n, text)
	})
	if err != nil {
		return err
	}
	return r.flush()
}

func (r *reader) malformed(n int, reason string) { r.in.Diag.Malformed(r.in.Name, n, reason) }

// line handles line n.
func (r *reader) line(n int, text string) error {
	switch {
	case strings.TrimSpace(text) == "":
	case strings.HasPrefix(text, CommentPrefix):
		return r.comment(n, text)
	case strings.HasPrefix(text, "#[StartTime:"):
		r.startNs, r.hasStart = r.headerTime(n, text, "#[StartTime:")
	case strings.HasPrefix(text, "#[BaseTime:"):
		r.baseNs, r.hasBase = r.headerTime(n, text, "#[BaseTime:")
	case strings.HasPrefix(text, "#"), strings.HasPrefix(text, `"StartTimestamp"`):
	default:
		return r.data(n, text)
	}
	return nil
}

// headerTime reads the seconds since the epoch of a StartTime or BaseTime
// comment.
func (r *reader) headerTime(n int, text, prefix string) (int64, bool) {
	f := strings.Fields(strings.TrimPrefix(text, prefix))
	if len(f) > 0 {
		if ns, ok := parseDecimal(strings.TrimSuffix(f[0], "]")); ok {
			return ns, true
		}
	}
	r.malformed(n, prefix[2:len(prefix)-1]+" is not seconds since the epoch")
	return 0, false
}

// comment handles a latscope comment.
func (r *reader) comment(n int, text string) error {
	c, err := ParseComment(text)
	if err != nil {
		r.malformed(n, err.Error())
		return nil
	}
	f := c.Fields
	switch c.Kind {
	case KindMarker:
		r.latscope = true
		if v, ok := f["values"]; ok {
			u, err := hist.ParseUnit(v)
			if err != nil {
				r.malformed(n, err.Error())
				return nil
			}
			r.lsUnit = u
		}
	case KindSeries:
		if f["tag"] == "" {
			r.malformed(n, "series comment without tag")
			return nil
		}
		r.series[f["tag"]] = stream.Key{Event: f["event"], Instance: f["instance"], Source: f["source"]}
	case KindGrid:
		g, err := ParseGrid(f)
		if err != nil || f["id"] == "" {
			r.malformed(n, fmt.Sprintf("grid comment: %v", cmpErr(err, "no id")))
			return nil
		}
		r.grids[f["id"]] = g
	case KindInterval:
		return r.markInterval(n, f)
	case KindHist:
		r.pending, r.pendingAt = &c, n
	}
	return nil // other kinds: a newer latscope's, ignored
}

func cmpErr(err error, otherwise string) string {
	if err != nil {
		return err.Error()
	}
	return otherwise
}

// markInterval starts the interval an interval comment describes.
func (r *reader) markInterval(n int, f map[string]string) error {
	if err := r.flush(); err != nil {
		return err
	}
	start, err := time.Parse(time.RFC3339Nano, f["start"])
	if err != nil {
		r.malformed(n, "interval start is not an RFC 3339 time")
		return nil
	}
	d, err := strconv.ParseInt(f["duration"], 10, 64)
	if err != nil || d <= 0 {
		r.malformed(n, "interval duration is not a positive number of ns")
		return nil
	}
	_, rel := f["relative"]
	_, gap := f["gap"]
	r.cur = &stream.Interval{Source: r.in.Name, Start: start, Duration: time.Duration(d), Relative: rel, Gap: gap}
	r.curMarked = true
	return nil
}

// data handles a data line: [Tag=T,]start,length,max,payload.
func (r *reader) data(n int, text string) error {
	hc, hcAt := r.pending, r.pendingAt
	r.pending = nil
	tag := ""
	if rest, ok := strings.CutPrefix(text, "Tag="); ok {
		var found bool
		tag, text, found = strings.Cut(rest, ",")
		if !found {
			r.malformed(n, "Tag= without the fields after it")
			return nil
		}
	}
	f := strings.SplitN(text, ",", 4)
	if len(f) != 4 {
		r.malformed(n, "not a data line (want [Tag=T,]start,length,max,histogram)")
		return nil
	}
	ts, ok1 := parseDecimal(f[0])
	length, ok2 := parseDecimal(f[1])
	if !ok1 || !ok2 {
		r.malformed(n, "start or length is not a number of seconds")
		return nil
	}
	hh, err := hdr.Decode([]byte(strings.TrimSpace(f[3])))
	if err != nil {
		r.malformed(n, "histogram payload: "+err.Error())
		return nil
	}
	if hh.ByteSize() > maxHDRBytes {
		r.malformed(n, fmt.Sprintf("histogram geometry of %d MiB (at most %d)", hh.ByteSize()>>20, maxHDRBytes>>20))
		return nil
	}
	key := r.keyOf(tag)
	if !r.opts.KeepEvent(key.Event) {
		return nil
	}
	var h *hist.Histogram
	if hc != nil && r.latscope && hc.Fields["tag"] == tag {
		h = r.latscopeHist(hcAt, *hc, hh)
	}
	if h == nil {
		h = r.foreignHist(hh)
	}
	if h == nil {
		r.malformed(n, "histogram values out of range")
		return nil
	}
	return r.place(n, ts, length, stream.SeriesHist{Key: key, Hist: h})
}

// keyOf returns a tag's series.
func (r *reader) keyOf(tag string) stream.Key {
	if k, ok := r.series[tag]; ok && r.latscope {
		return k
	}
	if tag == "" {
		return stream.Key{Event: untagged}
	}
	return stream.Key{Event: tag}
}

// latscopeHist rebuilds a histogram latscope wrote; nil when the comment
// does not fit (the line is then read as any HdrHistogram).
func (r *reader) latscopeHist(n int, c Comment, hh *hdr.Histogram) *hist.Histogram {
	f := c.Fields
	g, ok := r.grids[f["grid"]]
	if !ok {
		r.malformed(n, fmt.Sprintf("hist comment names grid %q, not declared before", f["grid"]))
		return nil
	}
	counts, _ := FromHDR(g, r.lsUnit, hh)
	if err := ApplyFixes(&counts, f["fix"]); err != nil {
		r.malformed(n, err.Error())
		return nil
	}
	h, err := g.Histogram(counts)
	if err == nil {
		h.Sum, err = strconv.ParseFloat(f["sum"], 64)
	}
	if err == nil {
		h.SumExact = f["exact"] == "1"
		h.TopOpen = h.TopOpen || f["open"] == "1"
		err = h.Validate()
	}
	if err != nil {
		r.malformed(n, "hist comment: "+err.Error())
		return nil
	}
	return h
}

// foreignHist places an HdrHistogram on latscope's per-event grid.
func (r *reader) foreignHist(hh *hdr.Histogram) *hist.Histogram {
	g := Grid{Unit: r.unit, Scale: hist.ExactScale}
	counts, sum := FromHDR(g, r.unit, hh)
	h, err := g.Histogram(counts)
	if err != nil {
		return nil
	}
	h.Sum = sum
	return h
}

// place adds a series to its interval: the one a latscope interval comment
// opened, else the current one when the window is the same, else a new one.
func (r *reader) place(n int, ts, length int64, s stream.SeriesHist) error {
	if r.cur != nil && r.curMarked {
		if !r.cur.Gap {
			r.cur.Series = mergeSeries(r.cur.Series, s)
		}
		return nil
	}
	if length <= 0 {
		r.malformed(n, "interval length is 0")
		return nil
	}
	if r.cur == nil || r.curTs != ts || r.curLen != length {
		if err := r.flush(); err != nil {
			return err
		}
		start, rel := r.when(ts)
		r.cur = &stream.Interval{Source: r.in.Name, Start: start, Duration: time.Duration(length), Relative: rel}
		r.curTs, r.curLen = ts, length
	}
	r.cur.Series = mergeSeries(r.cur.Series, s)
	return nil
}

// when turns a line's start into a time as HdrHistogram's log readers do:
// BaseTime + start; without BaseTime, StartTime + start when start is more
// than a year before StartTime (relative timestamps), else start itself.
// Times within a year of the epoch are relative (no wall clock).
func (r *reader) when(ts int64) (time.Time, bool) {
	var base int64
	switch {
	case r.hasBase:
		base = r.baseNs
	case r.hasStart && ts < r.startNs-yearNs:
		base = r.startNs
	}
	abs := base + ts
	if abs < yearNs {
		return stream.RelativeStart.Add(time.Duration(abs)), true
	}
	return time.Unix(0, abs).In(r.opts.Loc()), false
}

// mergeSeries adds s to list, summing it into a series of the same key.
func mergeSeries(list []stream.SeriesHist, s stream.SeriesHist) []stream.SeriesHist {
	for i := range list {
		if list[i].Key == s.Key {
			list[i].Hist.Merge(s.Hist)
			return list
		}
	}
	return append(list, s)
}

// flush emits the current interval (through the Differ for cumulative
// logs).
func (r *reader) flush() error {
	iv := r.cur
	r.cur, r.curMarked = nil, false
	if iv == nil {
		return nil
	}
	if r.differ != nil && !iv.Gap {
		d, ok, err := r.differ.Next(iv.End(), iv.Duration, iv.Relative, iv.Series)
		if err != nil {
			r.once.Warn("differ", "--counts cumulative: %v", err)
			return nil
		}
		if !ok {
			return nil
		}
		iv = &d
	}
	return r.emit(*iv)
}

// parseDecimal reads non-negative decimal seconds ("12", "0.127",
// "1441812279.474") into nanoseconds, exactly to 9 decimals.
func parseDecimal(s string) (int64, bool) {
	s = strings.TrimSpace(s)
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || len(whole) > 10 {
		return 0, false
	}
	var ns int64
	for _, c := range whole {
		if c < '0' || c > '9' {
			return 0, false
		}
		ns = ns*10 + int64(c-'0')
	}
	if ns > 9e9 { // past 2255: beyond int64 nanoseconds
		return 0, false
	}
	ns *= 1e9
	scale := int64(1e8)
	for _, c := range frac {
		if c < '0' || c > '9' {
			return 0, false
		}
		ns += int64(c-'0') * scale
		scale /= 10
	}
	return ns, ns >= 0
}
