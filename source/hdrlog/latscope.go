package hdrlog

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/latscope/latscope/hist"
)

// latscope writes comment lines into the logs it produces (sink/hdrlog) to
// carry what an HdrHistogram cannot: each series' exact key, the bucket grid
// or edges of every histogram, its sum and whether that sum is exact, and
// the exact window of every interval. HdrHistogram readers skip comments;
// latscope uses them to map each HDR bucket back onto the original buckets,
// so a latscope → hdrlog → latscope round trip keeps every count.
//
//	#[latscope hdrlog 1 values=ns]                         marker, first
//	#[latscope series tag=T event="..." instance="..." source="..."]
//	#[latscope grid id=g1 unit=us scale=6 zeropow=-2]     power-of-two grid
//	#[latscope grid id=g2 unit=ns bounds=1,2,...,+Inf]      custom edges
//	#[latscope interval start=RFC3339Nano duration=NS [relative] [gap]]
//	#[latscope hist tag=T grid=g1 sum=F exact=0|1 open=0|1 [fix=z:C,I:C,...]]
//	Tag=T,start,length,max,HIST...                          the data line
//
// A hist comment describes the data line that follows it. fix lists the
// buckets (z: the zero bucket) whose count the HDR line cannot hold
// exactly (fractional counts, buckets narrower than a nanosecond); the
// writer checks every line against this package's reading and lists every
// difference, so the reading is exact by construction.

// Comment kinds.
const (
	CommentPrefix = "#[latscope "
	KindMarker    = "hdrlog"
	KindSeries    = "series"
	KindGrid      = "grid"
	KindInterval  = "interval"
	KindHist      = "hist"
	// MarkerVersion is the version of this comment grammar.
	MarkerVersion = "1"
)

// Field is one key=value of a latscope comment; Quoted values are Go
// string literals, flags have no value.
type Field struct {
	Key, Value string
	Quoted     bool
	Flag       bool
}

// FormatComment returns a comment line (without newline).
func FormatComment(kind string, fields ...Field) string {
	var b strings.Builder
	b.WriteString(CommentPrefix)
	b.WriteString(kind)
	for _, f := range fields {
		b.WriteByte(' ')
		b.WriteString(f.Key)
		if f.Flag {
			continue
		}
		b.WriteByte('=')
		if f.Quoted {
			b.WriteString(strconv.Quote(f.Value))
		} else {
			b.WriteString(f.Value)
		}
	}
	b.WriteByte(']')
	return b.String()
}

// Comment is a parsed latscope comment.
type Comment struct {
	Kind   string
	Fields map[string]string // flags map to ""
}

// ParseComment reads a line starting with CommentPrefix.
func ParseComment(line string) (Comment, error) {
	body, ok := strings.CutPrefix(strings.TrimRight(line, " \t\r"), CommentPrefix)
	if !ok || !strings.HasSuffix(body, "]") {
		return Comment{}, errors.New("latscope comment not closed by ]")
	}
	body = body[:len(body)-1]
	kind, rest, _ := strings.Cut(body, " ")
	c := Comment{Kind: kind, Fields: map[string]string{}}
	for rest = strings.TrimLeft(rest, " "); rest != ""; rest = strings.TrimLeft(rest, " ") {
		end := strings.IndexAny(rest, "= ")
		if end < 0 || rest[end] == ' ' {
			if end < 0 {
				end = len(rest)
			}
			c.Fields[rest[:end]] = ""
			rest = rest[end:]
			continue
		}
		key := rest[:end]
		rest = rest[end+1:]
		var val string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return Comment{}, fmt.Errorf("field %s: bad quoted value", key)
			}
			val, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			i := strings.IndexByte(rest, ' ')
			if i < 0 {
				i = len(rest)
			}
			val, rest = rest[:i], rest[i:]
		}
		c.Fields[key] = val
	}
	return c, nil
}

// Grid is the bucket layout of a latscope histogram: a power-of-two grid
// (Scale, ZeroPow) or custom edges (Bounds), in Unit.
type Grid struct {
	Unit    hist.Unit
	Scale   int
	ZeroPow int
	Bounds  []float64
}

// GridOf returns the layout of h.
func GridOf(h *hist.Histogram) Grid {
	if h.IsCustom() {
		return Grid{Unit: h.Unit, Bounds: h.Bounds}
	}
	return Grid{Unit: h.Unit, Scale: h.Scale, ZeroPow: h.ZeroPow}
}

// Fields returns the grid comment's fields (without id).
func (g Grid) Fields() []Field {
	out := []Field{{Key: "unit", Value: g.Unit.String()}}
	if g.Bounds != nil {
		parts := make([]string, len(g.Bounds))
		for i, b := range g.Bounds {
			parts[i] = strconv.FormatFloat(b, 'g', -1, 64)
		}
		return append(out, Field{Key: "bounds", Value: strings.Join(parts, ",")})
	}
	return append(out, Field{Key: "scale", Value: strconv.Itoa(g.Scale)}, Field{Key: "zeropow", Value: strconv.Itoa(g.ZeroPow)})
}

// Spec returns the grid's fields as one string, a map key for writers.
func (g Grid) Spec() string { return FormatComment(KindGrid, g.Fields()...) }

// Limits on declared grids, far beyond any latency (2^±64 units, edges from
// 1e-12 to 1e18 units), so that a damaged or hostile comment cannot make
// later rebinning walk millions of buckets.
const (
	maxGridEdges = 1 << 16
	maxZeroPow   = 64
	minEdge      = 1e-12
	maxEdge      = 1e18
)

// ParseGrid reads a grid comment's fields.
func ParseGrid(f map[string]string) (Grid, error) {
	u, err := hist.ParseUnit(f["unit"])
	if err != nil {
		return Grid{}, err
	}
	g := Grid{Unit: u}
	if b, ok := f["bounds"]; ok {
		parts := strings.Split(b, ",")
		if len(parts) > maxGridEdges {
			return Grid{}, fmt.Errorf("%d bucket edges (at most %d)", len(parts), maxGridEdges)
		}
		g.Bounds = make([]float64, len(parts))
		for i, p := range parts {
			if g.Bounds[i], err = strconv.ParseFloat(p, 64); err != nil {
				return Grid{}, fmt.Errorf("bucket edge %q: %w", p, err)
			}
		}
		if _, err := hist.NewCustom(u, g.Bounds); err != nil {
			return Grid{}, err
		}
		top := g.Bounds[len(g.Bounds)-1]
		if math.IsInf(top, 1) {
			top = g.Bounds[len(g.Bounds)-2]
		}
		if g.Bounds[0] != 0 && g.Bounds[0] < minEdge || top > maxEdge {
			return Grid{}, fmt.Errorf("bucket edges beyond %g..%g units", minEdge, maxEdge)
		}
		return g, nil
	}
	if g.Scale, err = strconv.Atoi(f["scale"]); err != nil || g.Scale < 0 || g.Scale > hist.MaxScale {
		return Grid{}, fmt.Errorf("scale %q is not 0..%d", f["scale"], hist.MaxScale)
	}
	if g.ZeroPow, err = strconv.Atoi(f["zeropow"]); err != nil || g.ZeroPow < -maxZeroPow || g.ZeroPow > maxZeroPow {
		return Grid{}, fmt.Errorf("zeropow %q is not an integer power of two", f["zeropow"])
	}
	return g, nil
}

// Counts are a histogram's counts by bucket: Zero for the zero bucket,
// Buckets by index (the absolute grid index, or the custom bucket index).
type Counts struct {
	Zero    float64
	Buckets map[int]float64
}

// CountsOf returns h's non-zero counts.
func CountsOf(h *hist.Histogram) Counts {
	c := Counts{Zero: h.ZeroCount, Buckets: map[int]float64{}}
	for j, n := range h.Counts {
		if n != 0 {
			c.Buckets[h.Offset+j] = n
		}
	}
	return c
}

// ZeroBucket is the index Edges and Index use for the zero bucket.
const ZeroBucket = math.MinInt

// Edges returns bucket i's edges in units; an open custom top [l, +Inf)
// is read as [l, 2l) as hist does.
func (g Grid) Edges(i int) (lo, hi float64) {
	if i == ZeroBucket {
		return 0, g.zeroEdge()
	}
	if g.Bounds != nil {
		return hist.CustomEdges(g.Bounds, i)
	}
	return gridEdge(i, g.Scale), gridEdge(i+1, g.Scale)
}

func (g Grid) zeroEdge() float64 {
	if g.Bounds != nil {
		return g.Bounds[0]
	}
	return math.Ldexp(1, g.ZeroPow)
}

// gridEdge is 2^(i/2^s).
func gridEdge(i, s int) float64 {
	whole := i >> s
	return math.Ldexp(math.Exp2(float64(i-whole<<s)/float64(int(1)<<s)), whole)
}

// Index returns the bucket holding x units (ZeroBucket below the zero
// edge); values past a finite custom top edge go to the last bucket.
func (g Grid) Index(x float64) int {
	if !(x >= g.zeroEdge()) {
		return ZeroBucket
	}
	if g.Bounds != nil {
		i := sort.SearchFloat64s(g.Bounds, x) // first edge ≥ x
		if i < len(g.Bounds) && g.Bounds[i] == x {
			i++
		}
		return min(i-1, len(g.Bounds)-2)
	}
	n := 1 << g.Scale
	i := int(math.Floor(math.Log2(x) * float64(n)))
	for gridEdge(i, g.Scale) > x {
		i--
	}
	for gridEdge(i+1, g.Scale) <= x {
		i++
	}
	return i
}

// FromHDR maps every bucket of an HdrHistogram onto the grid: its count
// goes to the grid bucket holding the HDR bucket's median equivalent value
// (values in valueUnit). sum is the sum of those values times the counts,
// in grid units: an estimate.
func FromHDR(g Grid, valueUnit hist.Unit, hh *hdr.Histogram) (c Counts, sum float64) {
	c.Buckets = map[int]float64{}
	ratio := float64(valueUnit) / float64(g.Unit)
	for _, bar := range hh.Distribution() {
		if bar.Count <= 0 {
			continue
		}
		median := bar.From + (bar.To-bar.From+1)/2
		x := float64(median) * ratio
		n := float64(bar.Count)
		sum += x * n
		if i := g.Index(x); i == ZeroBucket {
			c.Zero += n
		} else {
			c.Buckets[i] += n
		}
	}
	return c, sum
}

// Histogram builds a histogram on the grid with the given counts (empty
// sum: the caller sets Sum and SumExact).
func (g Grid) Histogram(c Counts) (*hist.Histogram, error) {
	if g.Bounds != nil {
		h, err := hist.NewCustom(g.Unit, g.Bounds)
		if err != nil {
			return nil, err
		}
		h.ZeroCount = c.Zero
		for i, n := range c.Buckets {
			if i < 0 || i >= len(h.Counts) {
				return nil, fmt.Errorf("bucket %d outside the %d custom buckets", i, len(h.Counts))
			}
			h.Counts[i] = n
		}
		return h, nil
	}
	h := &hist.Histogram{Unit: g.Unit, Scale: g.Scale, ZeroPow: g.ZeroPow, ZeroCount: c.Zero}
	lo, hi := math.MaxInt, math.MinInt
	for i, n := range c.Buckets {
		if n != 0 {
			lo, hi = min(lo, i), max(hi, i)
		}
	}
	if lo <= hi {
		if lo < g.ZeroPow<<g.Scale {
			return nil, fmt.Errorf("bucket %d lies below the zero bucket's edge 2^%d", lo, g.ZeroPow)
		}
		if hi-lo >= maxGridBuckets {
			return nil, fmt.Errorf("buckets %d..%d span more than %d", lo, hi, maxGridBuckets)
		}
		h.Offset = lo
		h.Counts = make([]float64, hi-lo+1)
		for i, n := range c.Buckets {
			if n != 0 {
				h.Counts[i-lo] = n
			}
		}
	}
	return h, nil
}

// maxGridBuckets bounds a grid histogram built from a log: 64 powers of two
// at the finest scale, as in latscope recordings.
const maxGridBuckets = 64 << hist.MaxScale

// FormatFixes returns the fix field's value: "z:C" and "I:C" entries in
// bucket order.
func FormatFixes(zero *float64, buckets map[int]float64) string {
	var parts []string
	if zero != nil {
		parts = append(parts, "z:"+strconv.FormatFloat(*zero, 'g', -1, 64))
	}
	idx := make([]int, 0, len(buckets))
	for i := range buckets {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		parts = append(parts, strconv.Itoa(i)+":"+strconv.FormatFloat(buckets[i], 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

// ApplyFixes sets the counts a fix field lists.
func ApplyFixes(c *Counts, fix string) error {
	if fix == "" {
		return nil
	}
	for _, part := range strings.Split(fix, ",") {
		k, v, ok := strings.Cut(part, ":")
		n, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil || n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
			return fmt.Errorf("fix %q is not BUCKET:COUNT", part)
		}
		if k == "z" {
			c.Zero = n
			continue
		}
		i, err := strconv.Atoi(k)
		if err != nil {
			return fmt.Errorf("fix %q: bucket %q is not an integer", part, k)
		}
		if n == 0 {
			delete(c.Buckets, i)
		} else {
			c.Buckets[i] = n
		}
	}
	return nil
}

// SafeTag turns a series name into an HdrHistogram tag: no commas, spaces
// or control characters (the log format's separators), never empty.
func SafeTag(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c <= ' ' || c == ',' || c == 0x7f {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}
