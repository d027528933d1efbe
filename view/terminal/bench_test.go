package terminal

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/heatmap"
)

// benchGrid is a SYNTHETIC grid of 200 one-second columns whose events
// spread over 20 power-of-two rows (1 µs to 1 s).
func benchGrid(b *testing.B) *stream.Grid {
	g := stream.NewGrid(time.Second)
	for c := range 200 {
		h := hist.NewExact(hist.Microsecond, 0)
		for r := range 20 {
			_ = h.RecordN(math.Ldexp(1.5, r), float64(1+(c*r)%37))
		}
		g.Add(stream.Interval{Source: "bench", Start: t0.Add(time.Duration(c) * time.Second), Duration: time.Second,
			Series: []stream.SeriesHist{{Key: readKey, Hist: h}}})
	}
	return g
}

// benchSize is the terminal that holds 200 columns and 20 rows per map.
const benchWidth, benchHeight = 229, 50

// BenchmarkFrame200x20 builds and renders (colour, both maps) one screen of
// 200 columns × 20 rows per map: the work of one live frame.
func BenchmarkFrame200x20(b *testing.B) {
	g := benchGrid(b)
	cols, rows := Layout(benchWidth, benchHeight, Both)
	if cols != 200 || rows != 20 {
		b.Fatalf("layout %d×%d", cols, rows)
	}
	s := g.Series()[0]
	var buf bytes.Buffer
	o := RenderOptions{Width: benchWidth, Height: benchHeight, SeriesIndex: 1, SeriesCount: 1}
	b.ReportAllocs()
	for b.Loop() {
		f := heatmap.Build(g, s, heatmap.Options{Columns: cols, MaxRows: rows, MinRows: min(rows, 10)})
		buf.Reset()
		Render(&buf, f, o)
	}
	b.SetBytes(int64(buf.Len()))
}

// BenchmarkRender200x20 renders the same screen from a built frame.
func BenchmarkRender200x20(b *testing.B) {
	g := benchGrid(b)
	cols, rows := Layout(benchWidth, benchHeight, Both)
	f := heatmap.Build(g, g.Series()[0], heatmap.Options{Columns: cols, MaxRows: rows, MinRows: min(rows, 10)})
	if len(f.Columns) != 200 || len(f.Rows) != 20 {
		b.Fatalf("frame %d×%d", len(f.Columns), len(f.Rows))
	}
	var buf bytes.Buffer
	o := RenderOptions{Width: benchWidth, Height: benchHeight}
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		Render(&buf, f, o)
	}
	b.SetBytes(int64(buf.Len()))
}
