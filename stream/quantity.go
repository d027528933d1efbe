package stream

import "github.com/latscope/latscope/hist"

// Quantity names what a mean series measures when it is not a latency:
// host figures such as r/s, %util or kB used. Its value per window is
// Sum/Count, so that windows merge exactly (the sum of sums over the sum of
// counts): r/s is reads (Sum) over seconds (Count), %util busy ms × 100
// (Sum) over elapsed ms (Count), a gauge such as kB used its value × seconds
// (Sum) over seconds (Count). The empty Quantity is a latency in the
// series' Unit.
type Quantity string

// The quantities mean series carry.
const (
	Latency     Quantity = ""              // Sum in Unit over Count events
	Percent     Quantity = "percent"       // %user, %util, PSI stall share
	PerSecond   Quantity = "per_second"    // r/s, rxpck/s, majflt/s
	KBPerSecond Quantity = "kB_per_second" // rkB/s, rxkB/s
	KB          Quantity = "kB"            // kbmemused
	Count       Quantity = "count"         // aqu-sz, load average, run queue
	Ratio       Quantity = "ratio"         // a plain number without a unit
)

// QuantityUnit is the Unit of every non-latency mean series: scale one, so
// that sums add unscaled and code that checks a unit's validity keeps
// working.
const QuantityUnit = hist.Nanosecond

// Valid reports whether q is a known quantity.
func (q Quantity) Valid() bool {
	switch q {
	case Latency, Percent, PerSecond, KBPerSecond, KB, Count, Ratio:
		return true
	}
	return false
}

// IsLatency reports whether q is a latency (the zero Quantity).
func (q Quantity) IsLatency() bool { return q == Latency }

// Symbol is what follows a value of q when it is printed: "%", "/s",
// " kB/s", " kB" (12.5%, 412/s, 1648 kB/s), or nothing for counts, ratios
// and latencies (printed as durations).
func (q Quantity) Symbol() string {
	switch q {
	case Percent:
		return "%"
	case PerSecond:
		return "/s"
	case KBPerSecond:
		return " kB/s"
	case KB:
		return " kB"
	}
	return ""
}
