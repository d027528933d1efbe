package heatmap

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/latscope/latscope/stream"
)

// MaxMatrixColumns caps the columns of the machine-readable matrix
// (`heatmap --format json|csv`): a week of 6 s columns, a day of 1 s ones.
// A recording that needs more gets wider columns (FitGrid), so that one
// frame stays within about a hundred megabytes.
const MaxMatrixColumns = 100_000

// eachFrame builds the frame of every series of the grid, with every column
// and every latency row, one at a time: the whole recording for
// machine-readable output, in the memory of one frame.
func eachFrame(g *stream.Grid, scale Scale, fn func(Frame) error) error {
	for _, s := range g.Series() {
		if err := fn(Build(g, s, Options{Scale: scale})); err != nil {
			return err
		}
	}
	return nil
}

// matrixJSON is the JSON form of a frame: rows bottom to top, columns oldest
// first, values[column][row]; a gap column is null.
type matrixJSON struct {
	Event         string        `json:"event"`
	Instance      string        `json:"instance"`
	Source        string        `json:"source,omitempty"`
	ColumnSeconds float64       `json:"column_seconds"`
	Rows          []rowJSON     `json:"rows"`
	Columns       []columnJSON  `json:"columns"`
	Frequency     [][]float64   `json:"events_per_s"`
	Intensity     [][]float64   `json:"seconds_waited_per_s"`
	Levels        levelsJSON    `json:"levels"`
	Stats         statsJSONPart `json:"stats"`
}

type rowJSON struct {
	LowerUs float64  `json:"lower_us"`
	UpperUs *float64 `json:"upper_us"` // null: the top row holds everything above
	Label   string   `json:"label"`
}

type columnJSON struct {
	Start     *string `json:"start"`
	OffsetS   float64 `json:"offset_s"`
	ObservedS float64 `json:"observed_s"`
	Gap       bool    `json:"gap,omitempty"`
}

type levelsJSON struct {
	Scale     string  `json:"scale"`
	MaxFreq   float64 `json:"max_events_per_s"`
	MaxInten  float64 `json:"max_seconds_waited_per_s"`
	Frequency [][]int `json:"frequency"`
	Intensity [][]int `json:"intensity"`
}

type statsJSONPart struct {
	Events   float64  `json:"events"`
	MeanUs   *float64 `json:"mean_us"`
	P50Us    *float64 `json:"p50_us"`
	P99Us    *float64 `json:"p99_us"`
	SumExact bool     `json:"sum_exact"`
}

// WriteJSON writes every series of the grid as {"series":[...]} with the
// rates of every cell and their colour levels (-1 gap, 0 zero, 1..6). The
// series are written as they are built, indented as one encoding of the
// whole object would be.
func WriteJSON(w io.Writer, g *stream.Grid, scale Scale) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("{\n  \"series\": [")
	n := 0
	err := eachFrame(g, scale, func(f Frame) error {
		b, err := json.MarshalIndent(toJSON(f), "    ", "  ")
		if err != nil {
			return err
		}
		if n > 0 {
			bw.WriteString(",")
		}
		n++
		bw.WriteString("\n    ")
		_, err = bw.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	if n > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}

func toJSON(f Frame) matrixJSON {
	m := matrixJSON{Event: f.Key.Event, Instance: f.Key.Instance, Source: f.Key.Source, ColumnSeconds: f.ColumnWidth.Seconds()}
	for _, r := range f.Rows {
		row := rowJSON{LowerUs: r.Lower / 1e3, Label: r.Label}
		if !math.IsInf(r.Upper, 1) {
			row.UpperUs = finite(r.Upper / 1e3)
		}
		m.Rows = append(m.Rows, row)
	}
	var origin time.Time
	for i, c := range f.Columns {
		if i == 0 {
			origin = c.Start
		}
		col := columnJSON{OffsetS: c.Start.Sub(origin).Seconds(), ObservedS: c.Observed, Gap: c.Gap}
		if !f.Stats.Relative {
			s := c.Start.Format(time.RFC3339Nano)
			col.Start = &s
		}
		m.Columns = append(m.Columns, col)
	}
	m.Frequency = cells(f.Frequency.Values)
	m.Intensity = cells(f.Intensity.Values)
	m.Levels = levelsJSON{Scale: f.Scale.String(), MaxFreq: f.Frequency.Max, MaxInten: f.Intensity.Max,
		Frequency: f.Frequency.Levels, Intensity: f.Intensity.Levels}
	m.Stats = statsJSONPart{Events: f.Stats.Events, MeanUs: finite(f.Stats.AvgLatency / 1e3),
		P50Us: finite(f.Stats.P50 / 1e3), P99Us: finite(f.Stats.P99 / 1e3), SumExact: f.Stats.SumExact}
	return m
}

// cells replaces gap columns (NaN) by null.
func cells(values [][]float64) [][]float64 {
	out := make([][]float64, len(values))
	for i, col := range values {
		if len(col) > 0 && math.IsNaN(col[0]) {
			continue
		}
		out[i] = col
	}
	return out
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// WriteCSV writes one row per cell of every series of the grid: series,
// column start, row bounds and the two rates; gap columns have empty rates.
func WriteCSV(w io.Writer, g *stream.Grid, scale Scale) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"event", "instance", "source", "start", "offset_s", "observed_s", "lower_us", "upper_us",
		"events_per_s", "seconds_waited_per_s"}); err != nil {
		return err
	}
	num := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	err := eachFrame(g, scale, func(f Frame) error {
		var origin time.Time
		for i, c := range f.Columns {
			if i == 0 {
				origin = c.Start
			}
			start := ""
			if !f.Stats.Relative {
				start = c.Start.Format(time.RFC3339Nano)
			}
			for j, r := range f.Rows {
				rec := []string{f.Key.Event, f.Key.Instance, f.Key.Source, start, num(c.Start.Sub(origin).Seconds()), num(c.Observed),
					num(r.Lower / 1e3), num(r.Upper / 1e3), num(f.Frequency.Values[i][j]), num(f.Intensity.Values[i][j])}
				if err := cw.Write(rec); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}
