package loadtest

import (
	"fmt"
	"math"

	"github.com/latscope/latscope/hist"
)

// Stats are the figures of one step as the report and its JSON show them.
// Latencies are in µs, throughput in operations per second, MB/s in 10^6
// bytes per second. No field is ever NaN or infinite: a step without
// operations gives zeros.
type Stats struct {
	Concurrency int `json:"concurrency"`
	// Rate is the intended open-loop arrival rate per second (0: closed loop).
	Rate    float64 `json:"rate,omitempty"`
	Seconds float64 `json:"seconds"`
	Ops     int64   `json:"ops"`
	IOPS    float64 `json:"iops"`
	MBs     float64 `json:"mb_s"`
	Latency
	CPUPerOpUS float64 `json:"cpu_per_op_us"`
	// LittleConcurrency is Little's law L = X·R: operations per second times
	// the mean latency in seconds, the mean number of operations in flight.
	LittleConcurrency float64 `json:"little_concurrency"`
	Errors            int64   `json:"errors"`
}

// Latency holds the latency figures every load tool's report shows, in µs:
// the mean, the percentiles and the maximum. Reports embed it (their JSON
// stays flat), and so do the benchmark harnesses that compare latscope's
// figures with other tools'.
type Latency struct {
	// MeanUS is exact: the histogram's sum is exact for recorded latencies.
	MeanUS float64 `json:"mean_us"`
	// Percentiles interpolate linearly inside the histogram bucket that
	// holds them (1.1 % wide buckets at scale 6) and never exceed MaxUS.
	P50US  float64 `json:"p50_us"`
	P90US  float64 `json:"p90_us"`
	P99US  float64 `json:"p99_us"`
	P999US float64 `json:"p999_us"`
	// MaxUS is the exact maximum (Step.Max); when the step did not record
	// one, the upper edge of the highest non-empty bucket.
	MaxUS float64 `json:"max_us"`
}

// Closed reports whether the step ran a closed loop (no intended rate).
func (s Stats) Closed() bool { return s.Rate == 0 }

// Summarize computes the figures of one step.
func Summarize(s Step) Stats {
	st := Stats{
		Concurrency: s.Concurrency,
		Rate:        nonNegative(s.Rate),
		Seconds:     nonNegative(s.Elapsed.Seconds()),
		Errors:      s.Errors,
	}
	h := s.Latency
	if h == nil || h.Validate() != nil {
		return st
	}
	n := h.Count()
	if n <= 0 || math.IsInf(n, 0) {
		return st
	}
	st.Ops = int64(math.Round(n))
	if st.Seconds > 0 {
		st.IOPS = finite(n / st.Seconds)
		st.MBs = finite(float64(max(s.Bytes, 0)) / st.Seconds / 1e6)
	}
	toUS := usPerUnit(h.Unit)
	st.MaxUS = maxUS(s, h, toUS)
	st.MeanUS = nonNegative(h.Sum / n * toUS)
	quantile := func(q float64) float64 {
		v := nonNegative(h.Quantile(q) * toUS)
		if st.MaxUS > 0 {
			v = math.Min(v, st.MaxUS)
		}
		return v
	}
	st.P50US, st.P90US, st.P99US, st.P999US = quantile(0.5), quantile(0.9), quantile(0.99), quantile(0.999)
	st.CPUPerOpUS = nonNegative(float64(s.CPU) / 1e3 / n)
	st.LittleConcurrency = finite(st.IOPS * st.MeanUS / 1e6)
	return st
}

// usPerUnit converts histogram units to µs; an invalid unit is read as µs,
// the unit Step documents.
func usPerUnit(u hist.Unit) float64 {
	if !u.Valid() {
		return 1
	}
	return float64(u) / float64(hist.Microsecond)
}

// maxUS is the exact maximum when the step has one, else the upper edge of
// the highest non-empty bucket (an upper bound of the true maximum).
func maxUS(s Step, h *hist.Histogram, toUS float64) float64 {
	if s.Max > 0 {
		return float64(s.Max) / 1e3
	}
	b := h.Buckets()
	if len(b) == 0 {
		return 0
	}
	return finite(b[len(b)-1].Upper * toUS)
}

// finite maps NaN and ±Inf to 0, so that no figure breaks JSON.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// nonNegative is finite and clamps negative values to 0.
func nonNegative(v float64) float64 { return math.Max(0, finite(v)) }

// Little returns L = X·R for s: the mean number of operations in flight.
func Little(s Stats) float64 { return finite(s.IOPS * s.MeanUS / 1e6) }

// Thresholds of the closed-loop Little's-law check: outside [0.9, 1.1] of
// the worker count the measurement does not account for the workers' time.
const (
	littleLow  = 0.9
	littleHigh = 1.1
)

// LittleCheck is Words.LittleCheck with the default Words.
func LittleCheck(s Stats) (ratio float64, note string) { return Words{}.LittleCheck(s) }

// LittleCheck compares Little's law with the load. In a closed loop every
// worker always has one operation in flight, so L = X·R must equal the
// concurrency: ratio is L / Concurrency, and below 0.9 the workers spent
// time outside the measured operation (think time, load-generator
// overhead, CPU starvation); above 1.1 the timing itself is suspect. In an
// open loop L is the mean number of operations in flight, ratio is L over
// the worker pool (0 when the pool is unknown) and the note states L.
func (w Words) LittleCheck(s Stats) (ratio float64, note string) {
	w = w.withDefaults()
	l := Little(s)
	if s.Ops == 0 || s.Seconds == 0 {
		return 0, "no operations completed: nothing to check"
	}
	if !s.Closed() {
		return openLittle(s, l, w)
	}
	if s.Concurrency <= 0 {
		return 0, fmt.Sprintf("%.2f operations in flight on average (X·R); the number of %s is unknown", l, w.Workers)
	}
	n := float64(s.Concurrency)
	ratio = l / n
	switch {
	case ratio < littleLow:
		note = fmt.Sprintf("only %.2f of %s were inside a measured operation on average (%.0f %%): "+
			"the rest of their time went elsewhere — think time, load-generator overhead or CPU starvation",
			l, w.count(s.Concurrency), 100*ratio)
	case ratio > littleHigh:
		note = fmt.Sprintf("%.2f operations in flight on average is more than the %s (%.2f×): "+
			"the latencies or the elapsed time are mis-measured", l, w.count(s.Concurrency), ratio)
	default:
		note = fmt.Sprintf("%.2f of %s busy on average (%.0f %%): Little's law holds, "+
			"the time went to the measured operation", l, w.count(s.Concurrency), 100*ratio)
	}
	return ratio, note
}

// openLittle is LittleCheck for an open loop, whose latencies count from
// the intended start: L includes requests waiting for a free worker.
func openLittle(s Stats, l float64, w Words) (float64, string) {
	note := fmt.Sprintf("%.2f operations in flight on average (X·R) at %s/s achieved of %s/s intended", l, number(s.IOPS), number(s.Rate))
	if s.Concurrency <= 0 {
		return 0, note
	}
	ratio := l / float64(s.Concurrency)
	if ratio > littleLow {
		note += fmt.Sprintf("; that fills the pool of %s, so requests waited for a free %s "+
			"(their latency counts that wait)", w.count(s.Concurrency), w.Worker)
	}
	return ratio, note
}
