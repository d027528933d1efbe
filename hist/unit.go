// Package hist is latscope's latency histogram model: buckets on a
// power-of-two grid anchored in a time unit, explicit bound semantics, exact or
// estimated sums, percentiles, merging and rebinning.
//
// Every source turns its data into a Histogram and every view starts from one;
// this package imports only the standard library.
package hist

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Unit is the time unit in which a histogram's power-of-two grid is anchored,
// in nanoseconds. Oracle's WAIT_TIME_MILLI buckets are powers of two in
// milliseconds, WAIT_TIME_MICRO and 10046 ela values in microseconds, DTrace
// in nanoseconds: keeping the unit keeps the source's bucket edges exact.
type Unit int64

// The units sources use.
const (
	Nanosecond  Unit = 1
	Microsecond Unit = 1000
	Millisecond Unit = 1000 * 1000
	Second      Unit = 1000 * 1000 * 1000
)

// String returns the short name of the unit: ns, us, ms or s.
func (u Unit) String() string {
	switch u {
	case Nanosecond:
		return "ns"
	case Microsecond:
		return "us"
	case Millisecond:
		return "ms"
	case Second:
		return "s"
	}
	return fmt.Sprintf("%dns", int64(u))
}

// Duration converts a value in this unit to a time.Duration.
func (u Unit) Duration(v float64) time.Duration {
	return time.Duration(math.Round(v * float64(u)))
}

// Nanos converts a value in this unit to nanoseconds.
func (u Unit) Nanos(v float64) float64 { return v * float64(u) }

// Valid reports whether u is one of the known units.
func (u Unit) Valid() bool {
	switch u {
	case Nanosecond, Microsecond, Millisecond, Second:
		return true
	}
	return false
}

// ParseUnit reads a unit name as sources write it: ns/nanosec, us/µs/microsec,
// ms/millisec, s/sec. Case is ignored.
func ParseUnit(s string) (Unit, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "ns", "nanosec", "nanosecond", "nanoseconds":
		return Nanosecond, nil
	case "us", "µs", "μs", "microsec", "microsecond", "microseconds", "usec":
		return Microsecond, nil
	case "ms", "millisec", "millisecond", "milliseconds", "msec":
		return Millisecond, nil
	case "s", "sec", "second", "seconds":
		return Second, nil
	}
	return 0, fmt.Errorf("unknown latency unit %q (want ns, us, ms or s)", s)
}

// FormatDuration prints a latency given in nanoseconds in a human unit with
// three significant digits: 512ns, 1.02µs, 65.5µs, 8.19ms, 1.05s. It is the
// one latency format of every view.
func FormatDuration(ns float64) string {
	abs := math.Abs(ns)
	switch {
	case abs == 0:
		return "0"
	case abs < 1e3:
		return FormatSignificant(ns) + "ns"
	case abs < 1e6:
		return FormatSignificant(ns/1e3) + "µs"
	case abs < 1e9:
		return FormatSignificant(ns/1e6) + "ms"
	case abs < 100e9:
		return FormatSignificant(ns/1e9) + "s"
	default:
		// Long totals read better as 3h51m than as 13881s.
		return time.Duration(ns).Round(time.Second).String()
	}
}

// FormatLatency prints a latency in nanoseconds as FormatDuration does, or
// none when there is none to print: NaN (no events) or an infinity.
func FormatLatency(ns float64, none string) string {
	if math.IsNaN(ns) || math.IsInf(ns, 0) {
		return none
	}
	return FormatDuration(ns)
}

// FormatSignificant prints v with three significant digits below 1000 (no
// decimals above) and no trailing zeros: 0.25, 12.3, 456, 1234.
func FormatSignificant(v float64) string {
	decimals := 2
	switch a := math.Abs(v); {
	case a >= 100:
		decimals = 0
	case a >= 10:
		decimals = 1
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
