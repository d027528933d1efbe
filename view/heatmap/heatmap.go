// Package heatmap turns a stream.Grid into heat-map frames: for one series, a
// frequency map (events per second) and an intensity map (time waited per
// second) over latency rows (powers of two, or finer for exact durations) and
// wall-clock columns, with colour levels, labels and summary statistics.
// Terminal and image views render these frames; they compute nothing
// themselves.
package heatmap

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// Mode selects what a map shows.
type Mode int

// Map modes.
const (
	// Frequency: events per second in each latency row.
	Frequency Mode = iota
	// Intensity: time waited per second in each latency row (the estimated
	// latency times the frequency).
	Intensity
)

// String returns "frequency" or "intensity".
func (m Mode) String() string {
	if m == Intensity {
		return "intensity"
	}
	return "frequency"
}

// Scale selects how values map to colour levels.
type Scale int

// Colour scales.
const (
	Linear Scale = iota
	Log
)

// scaleNames are the scales' names, as --scale takes them.
var scaleNames = [...]string{Linear: "linear", Log: "log"}

// String returns "linear" or "log".
func (s Scale) String() string {
	if s == Log {
		return scaleNames[Log]
	}
	return scaleNames[Linear]
}

// ParseScale reads a scale's name: linear or log.
func ParseScale(name string) (Scale, error) {
	if i := slices.Index(scaleNames[:], name); i >= 0 {
		return Scale(i), nil
	}
	return Linear, fmt.Errorf("scale %q: want linear or log", name)
}

// Levels is the number of colour levels above zero, as in OraLatencyMap.
const Levels = 6

// Level values besides 1..Levels.
const (
	LevelGap  = -1 // no source observed the column: no data
	LevelZero = 0  // observed, no events
)

// Level maps v to a colour level: LevelGap for NaN, LevelZero for 0, else
// 1..6. Linear: ceil(6·v/max). Log: 1 + floor(6·ln(v/min)/ln(max/min)),
// capped at 6, where min is the smallest non-zero value in the window.
func Level(v, minNonZero, maxV float64, scale Scale) int {
	switch {
	case math.IsNaN(v):
		return LevelGap
	case v <= 0:
		return LevelZero
	case maxV <= 0:
		return 1
	}
	var l int
	if scale == Log {
		if maxV <= minNonZero {
			return Levels
		}
		l = 1 + int(math.Floor(Levels*math.Log(v/minNonZero)/math.Log(maxV/minNonZero)))
	} else {
		l = int(math.Ceil(Levels * v / maxV))
	}
	return min(max(l, 1), Levels)
}

// Palettes in the xterm 256-colour space: index 0 is the zero level, 1..6 the
// levels. They are OraLatencyMap's blue (frequency) and yellow-to-red
// (intensity) palettes.
var (
	FrequencyPalette = [Levels + 1]int{15, 51, 45, 39, 33, 27, 21}
	IntensityPalette = [Levels + 1]int{15, 226, 220, 214, 208, 202, 196}
)

// Palette returns the palette of a mode.
func Palette(m Mode) [Levels + 1]int {
	if m == Intensity {
		return IntensityPalette
	}
	return FrequencyPalette
}

// RGB returns the red, green and blue of an xterm 256-colour index, for
// renderers that draw pixels.
func RGB(xterm int) (r, g, b uint8) {
	basic := [16][3]uint8{
		{0, 0, 0}, {128, 0, 0}, {0, 128, 0}, {128, 128, 0}, {0, 0, 128}, {128, 0, 128}, {0, 128, 128}, {192, 192, 192},
		{128, 128, 128}, {255, 0, 0}, {0, 255, 0}, {255, 255, 0}, {0, 0, 255}, {255, 0, 255}, {0, 255, 255}, {255, 255, 255},
	}
	switch {
	case xterm < 0:
		return 0, 0, 0
	case xterm < 16:
		c := basic[xterm]
		return c[0], c[1], c[2]
	case xterm < 232:
		i := xterm - 16
		step := func(v int) uint8 {
			if v == 0 {
				return 0
			}
			return uint8(55 + 40*v)
		}
		return step(i / 36), step(i / 6 % 6), step(i % 6)
	case xterm < 256:
		v := uint8(8 + 10*(xterm-232))
		return v, v, v
	}
	return 255, 255, 255
}

// Row is one latency row of a frame, in nanoseconds: [Lower, Upper).
// FoldsBelow/FoldsAbove say the row also holds every latency below/above it.
type Row struct {
	Lower, Upper float64
	FoldsBelow   bool
	FoldsAbove   bool
	Label        string
	// Sub marks a row inside an octave when rows are finer than powers of
	// two: axes draw it as a tick, not a label, so they stay readable.
	Sub bool
}

// Column is one wall-clock column of a frame.
type Column struct {
	Index int
	Start time.Time
	// Gap: no source observed the column.
	Gap bool
	// Observed is the seconds the series' sources observed in the column.
	Observed float64
}

// Map is one heat map: Values[col][row] in events/s (frequency) or seconds
// waited per second (intensity); NaN marks a gap. Rows run bottom (index 0,
// shortest latencies) to top.
type Map struct {
	Mode   Mode
	Values [][]float64
	Levels [][]int
	// Max and MinNonZero are the largest and smallest non-zero cell in the
	// window; they set the colour scale.
	Max, MinNonZero float64
	// ColumnSums is each column's total over rows (NaN for gaps).
	ColumnSums []float64
	// MaxColumnSum is the largest column total in the window.
	MaxColumnSum float64
}

// Latest returns the values of the newest column (nil when the window is
// empty).
func (m Map) Latest() []float64 {
	if len(m.Values) == 0 {
		return nil
	}
	return m.Values[len(m.Values)-1]
}

// Stats are the numbers in a heat map's footer. Latencies are nanoseconds,
// NaN when there were no events.
type Stats struct {
	Events        float64
	AvgLatency    float64
	P50, P99      float64
	LatestEvents  float64
	LatestAvg     float64
	LatestP50     float64
	LatestP99     float64
	SumExact      bool
	TopCapped     bool
	Samples       int
	LatestSeconds float64
	LatestEnd     time.Time
	Relative      bool
}

// Frame is everything a view draws for one series at one moment.
type Frame struct {
	Key       stream.Key
	Label     string
	Unit      hist.Unit
	Rows      []Row
	Columns   []Column
	Frequency Map
	Intensity Map
	Stats     Stats
	Scale     Scale
	// RowsPerOctave is how many rows split each power of two: 1, or the
	// grid's finer rows when every histogram of the series held exact
	// durations (stream.Grid.RowScale).
	RowsPerOctave int
	// ColumnWidth is the wall-clock width of one column.
	ColumnWidth time.Duration
}

// Options shape a frame.
type Options struct {
	// Columns is how many columns to show, ending at End.
	Columns int
	// End is the last column shown; when HasEnd is false the grid's last.
	End    int
	HasEnd bool
	// MaxRows caps the latency rows per map (edge rows fold the rest);
	// MinRows pads sparse data so the map keeps a readable height.
	MaxRows int
	MinRows int
	Scale   Scale
	// Window shows all Columns columns ending at End (HasEnd), also those
	// before the first that holds data, as gaps: a window the caller chose
	// rather than the data's extent.
	Window bool
}

// Build computes the frame of series s on grid g.
func Build(g *stream.Grid, s *stream.GridSeries, opt Options) Frame {
	f := Frame{Key: s.Key, Label: s.Key.String(), Unit: s.Unit, Scale: opt.Scale, ColumnWidth: g.Width,
		RowsPerOctave: 1 << s.RowScale()}
	first, last, ok := g.Columns()
	if opt.HasEnd {
		last = opt.End
	}
	if opt.Columns <= 0 {
		opt.Columns = last - first + 1
	}
	switch {
	case opt.Window:
		first, ok = last-opt.Columns+1, true
	case ok:
		first = max(first, last-opt.Columns+1)
	}
	if ok {
		for c := first; c <= last; c++ {
			f.Columns = append(f.Columns, Column{Index: c, Start: g.ColumnStart(c), Observed: g.Observed(s, c)})
		}
	}
	lo, hi := chooseRows(s, opt)
	f.Rows = rowsFor(s.Unit, lo, hi, s)
	n := len(f.Rows)
	f.Frequency = Map{Mode: Frequency}
	f.Intensity = Map{Mode: Intensity}
	freq, inten := make([]float64, n), make([]float64, n)
	for i := range f.Columns {
		c := &f.Columns[i]
		covered := g.Rates(s, c.Index, lo, freq, inten)
		c.Gap = !covered
		f.Frequency.Values = append(f.Frequency.Values, column(freq, covered))
		f.Intensity.Values = append(f.Intensity.Values, column(inten, covered))
	}
	f.Frequency.finish(opt.Scale)
	f.Intensity.finish(opt.Scale)
	f.Stats = stats(g, s, g.Samples(s))
	return f
}

func column(v []float64, covered bool) []float64 {
	out := make([]float64, len(v))
	if !covered {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	copy(out, v)
	return out
}

// finish computes the scale bounds, levels and column sums.
func (m *Map) finish(scale Scale) {
	m.MinNonZero = math.Inf(1)
	for _, col := range m.Values {
		sum := 0.0
		for _, v := range col {
			if math.IsNaN(v) {
				sum = math.NaN()
				continue
			}
			sum += v
			if v > 0 {
				m.Max = math.Max(m.Max, v)
				m.MinNonZero = math.Min(m.MinNonZero, v)
			}
		}
		m.ColumnSums = append(m.ColumnSums, sum)
		if !math.IsNaN(sum) {
			m.MaxColumnSum = math.Max(m.MaxColumnSum, sum)
		}
	}
	if math.IsInf(m.MinNonZero, 1) {
		m.MinNonZero = 0
	}
	m.Levels = make([][]int, len(m.Values))
	for i, col := range m.Values {
		m.Levels[i] = make([]int, len(col))
		for j, v := range col {
			m.Levels[i][j] = Level(v, m.MinNonZero, m.Max, scale)
		}
	}
}

// chooseRows picks the row window: every row with events when it fits,
// else the MaxRows rows holding the most events, padded to MinRows.
func chooseRows(s *stream.GridSeries, opt Options) (lo, hi int) {
	lo, hi, ok := s.RowRange()
	if !ok {
		lo, hi = 0, 0
	}
	if opt.MaxRows > 0 && hi-lo+1 > opt.MaxRows {
		lo, hi = busiestWindow(s, lo, hi, opt.MaxRows)
	}
	zeroRow := s.Total.ZeroPow<<s.RowScale() - 1
	for opt.MinRows > 0 && hi-lo+1 < opt.MinRows {
		if lo > zeroRow && (hi-lo)%2 == 1 {
			lo--
		} else {
			hi++
		}
	}
	return lo, hi
}

// busiestWindow returns the n consecutive rows with the most events.
func busiestWindow(s *stream.GridSeries, lo, hi, n int) (int, int) {
	r := s.Total.RowsAt(s.RowScale())
	count := func(row int) float64 {
		if row == r.ZeroPow<<r.Scale-1 {
			return r.ZeroCount
		}
		if j := row - r.First; j >= 0 && j < len(r.Counts) {
			return r.Counts[j]
		}
		return 0
	}
	best, bestLo, sum := -1.0, lo, 0.0
	for row := lo; row <= hi; row++ {
		sum += count(row)
		if row-lo >= n {
			sum -= count(row - n)
		}
		if row-lo >= n-1 && sum > best {
			best, bestLo = sum, row-n+1
		}
	}
	return bestLo, bestLo + n - 1
}

// rowsFor builds the row descriptions for rows lo..hi of unit u at the
// series' row scale.
func rowsFor(u hist.Unit, lo, hi int, s *stream.GridSeries) []Row {
	scale := s.RowScale()
	zeroRow := s.Total.ZeroPow<<scale - 1
	minRow, maxRow, _ := s.RowRange()
	var rows []Row
	for r := lo; r <= hi; r++ {
		row := Row{Lower: u.Nanos(hist.RowLower(r, scale)), Upper: u.Nanos(hist.RowLower(r+1, scale))}
		if r <= zeroRow {
			row.Lower = 0
		}
		row.FoldsBelow = r == lo && (minRow < lo || r <= zeroRow)
		row.FoldsAbove = r == hi && maxRow > hi
		switch {
		case row.FoldsAbove:
			row.Label = ">" + hist.FormatDuration(row.Lower)
			row.Upper = math.Inf(1)
		case row.FoldsBelow:
			row.Label = "<" + hist.FormatDuration(row.Upper)
			row.Lower = 0
		default:
			row.Label = hist.FormatDuration(row.Lower)
			row.Sub = r&(1<<scale-1) != 0
		}
		rows = append(rows, row)
	}
	return rows
}

// stats computes the footer numbers.
func stats(g *stream.Grid, s *stream.GridSeries, samples int) Stats {
	u := s.Unit
	st := Stats{Samples: samples, Relative: g.Relative(), SumExact: s.Total.SumExact, TopCapped: s.Total.TopOpen}
	st.Events = s.Total.Count()
	st.AvgLatency = u.Nanos(s.Total.Mean())
	st.P50 = u.Nanos(s.Total.Quantile(0.5))
	st.P99 = u.Nanos(s.Total.Quantile(0.99))
	st.LatestAvg, st.LatestP50, st.LatestP99 = math.NaN(), math.NaN(), math.NaN()
	if s.Latest != nil {
		lu := s.Latest.Unit
		st.LatestEvents = s.Latest.Count()
		st.LatestAvg = lu.Nanos(s.Latest.Mean())
		st.LatestP50 = lu.Nanos(s.Latest.Quantile(0.5))
		st.LatestP99 = lu.Nanos(s.Latest.Quantile(0.99))
	}
	st.LatestSeconds = s.LatestDuration.Seconds()
	st.LatestEnd = s.LatestEnd
	return st
}
