package recording

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/latscope/latscope/stream"
)

// benchStreams are the two shapes of real data: Oracle power-of-two
// buckets (13 dense buckets, 2 instances) and exact per-wait histograms of
// a 10046 trace (scale 6, sparse, several events).
func benchStreams(b *testing.B) map[string][]stream.Interval {
	return map[string][]stream.Interval{
		"oracle-buckets": exampleIntervals(b, true),
		"trace-exact":    traceIntervals(b, "trc10046/apress-top1e_10.2.0.3_11.1.0.6/DBM11106_ora_6334.trc", 100*time.Millisecond),
	}
}

func BenchmarkWrite(b *testing.B) {
	for name, ivs := range benchStreams(b) {
		b.Run(name, func(b *testing.B) {
			size := len(encode(b, ivs))
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				w, err := NewWriter(io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				for _, iv := range ivs {
					if err := w.Write(iv); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(size)/float64(len(ivs)), "bytes/interval")
		})
	}
}

func BenchmarkRead(b *testing.B) {
	for name, ivs := range benchStreams(b) {
		b.Run(name, func(b *testing.B) {
			data := encode(b, ivs)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				rd, err := NewReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for {
					_, err := rd.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != len(ivs) {
					b.Fatalf("%d intervals, want %d", n, len(ivs))
				}
			}
			b.ReportMetric(float64(len(data))/float64(len(ivs)), "bytes/interval")
		})
	}
}
