package loadtest_test

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/probe/loadtest"
)

// A closed-loop sweep from 1 to 16 readers (synthetic: every reader sees
// the same latency, which grows as the device saturates).
func Example() {
	var steps []loadtest.Stats
	for _, s := range []struct {
		readers int
		us      float64
	}{{1, 200}, {2, 210}, {4, 240}, {8, 420}, {16, 830}} {
		h := hist.NewExact(hist.Microsecond, -10)
		ops := math.Round(10 * float64(s.readers) / (s.us / 1e6)) // 10 s, always busy
		_ = h.RecordN(s.us, ops)
		steps = append(steps, loadtest.Summarize(loadtest.Step{
			Concurrency: s.readers, Elapsed: 10 * time.Second, Bytes: int64(ops) * 8192,
			Latency: h, Max: time.Duration(s.us * 1e3), CPU: time.Duration(ops) * 5 * time.Microsecond,
		}))
	}
	_ = loadtest.WriteSteps(os.Stdout, steps, "reads")
	storage := loadtest.Words{Worker: "reader", Workers: "readers", Throughput: "IOPS"}
	knee := storage.FindKnee(steps)
	fmt.Println("knee:", knee.Reason)
	if u, ok := loadtest.FitUSL(steps); ok {
		fmt.Printf("USL: λ %.0f IOPS, σ %.3f, κ %.4f, peak %.0f IOPS at %.1f readers\n", u.Lambda, u.Sigma, u.Kappa, u.PeakIOPS, u.PeakConcurrency)
	}
	_, note := storage.LittleCheck(steps[4])
	fmt.Println("Little:", note)
	// Output:
	// concurrency  reads/s  MB/s   mean    p50    p90    p99  p99.9    max  CPU/op  Little L
	//           1     5000  41.0  200µs  200µs  200µs  200µs  200µs  200µs     5µs      1.00
	//           2     9524  78.0  210µs  210µs  210µs  210µs  210µs  210µs     5µs      2.00
	//           4    16667   137  240µs  240µs  240µs  240µs  240µs  240µs     5µs      4.00
	//           8    19048   156  420µs  419µs  420µs  420µs  420µs  420µs     5µs      8.00
	//          16    19277   158  830µs  829µs  830µs  830µs  830µs  830µs     5µs      16.0
	// knee: p99 420µs is 2.1× the p99 of 1 reader (200µs)
	// USL: λ 5560 IOPS, σ 0.110, κ 0.0085, peak 20230 IOPS at 10.2 readers
	// Little: 16.00 of 16 readers busy on average (100 %): Little's law holds, the time went to the measured operation
}
