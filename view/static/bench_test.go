package static

import (
	"io"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// benchRecording is SYNTHETIC: cols one-second intervals of series series,
// each filling rows power-of-two buckets with a drifting latency mode.
func benchRecording(cols, rows, series int) []stream.Interval {
	rng := rand.New(rand.NewPCG(42, 42))
	ivs := make([]stream.Interval, cols)
	for i := range ivs {
		iv := stream.Interval{Source: "bench", Start: syntheticStart.Add(time.Duration(i) * time.Second), Duration: time.Second}
		for s := range series {
			h := hist.NewBuckets(hist.Microsecond)
			mode := float64(rows)/2 + 3*math.Sin(float64(i+40*s)/60)
			for b := range rows {
				n := math.Round(1000 * math.Exp(-(float64(b)-mode)*(float64(b)-mode)/8) * (0.8 + 0.4*rng.Float64()))
				_ = h.AddBound(hist.UpperBound, math.Ldexp(1, b+1), n)
			}
			iv.Series = append(iv.Series, stream.SeriesHist{Key: stream.Key{Event: syntheticEventName(s)}, Hist: h})
		}
		ivs[i] = iv
	}
	return ivs
}

// countingWriter counts bytes written.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

func benchWriter(b *testing.B, write func(io.Writer, []stream.Interval, Options) error) {
	ivs := benchRecording(1000, 20, 5)
	var size countingWriter
	if err := write(&size, ivs, Options{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size.n)
	b.ReportAllocs()
	for b.Loop() {
		if err := write(io.Discard, ivs, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size.n), "out-bytes")
}

// BenchmarkWriteHTML writes a 1000-column × 20-row × 5-series recording.
func BenchmarkWriteHTML(b *testing.B) { benchWriter(b, WriteHTML) }

// BenchmarkWriteSVG writes the same recording as a standalone SVG.
func BenchmarkWriteSVG(b *testing.B) { benchWriter(b, WriteSVG) }

// BenchmarkWritePNG rasterises the same recording.
func BenchmarkWritePNG(b *testing.B) { benchWriter(b, WritePNG) }
