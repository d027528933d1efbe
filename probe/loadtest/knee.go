package loadtest

import (
	"fmt"
	"math"
	"strings"

	"github.com/latscope/latscope/hist"
)

// Knee is the first load level at which the system stops scaling.
type Knee struct {
	// Index is the knee step's position in the slice given to FindKnee.
	Index       int     `json:"-"`
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate,omitempty"`
	IOPS        float64 `json:"iops"`
	P99US       float64 `json:"p99_us"`
	// Reason says in plain words which test the step failed.
	Reason string `json:"reason"`
}

// Knee rule constants; see FindKnee.
const (
	// MinKneeOps is the fewest operations a step needs to take part: below
	// 100 the p99 is just the maximum, and the step's throughput is too
	// noisy for a 10 % test.
	MinKneeOps = 100
	// kneeP99Factor: a p99 this many times the reference step's is a knee.
	kneeP99Factor = 2
	// kneeGainPerDoubling: throughput must grow at least this much per
	// doubling of the concurrency (the default rule's 10 %).
	kneeGainPerDoubling = 1.1
	// kneeShortfall: an open-loop step achieving less than this fraction
	// of its intended rate is saturated.
	kneeShortfall = 0.9
)

// Words name the load in knee reasons and Little's-law notes; zero fields
// read "worker", "workers" and "ops/s". A storage test says
// Words{"reader", "readers", "IOPS"}, a network test
// Words{"connection", "connections", "round trips/s"}.
type Words struct {
	Worker, Workers, Throughput string
}

func (w Words) withDefaults() Words {
	if w.Worker == "" {
		w.Worker = "worker"
	}
	if w.Workers == "" {
		w.Workers = "workers"
	}
	if w.Throughput == "" {
		w.Throughput = "ops/s"
	}
	return w
}

// FindKnee returns the saturation knee of a sweep, or nil when every step
// still scaled, with the default Words; see Words.FindKnee.
func FindKnee(steps []Stats) *Knee { return Words{}.FindKnee(steps) }

// FindKnee returns the saturation knee of a sweep, or nil when every step
// still scaled; w names the load in the reason.
//
// Only steps with at least MinKneeOps operations take part, in the order
// given, and only steps of the same loop kind as the first of them
// (closed: Rate 0; open: Rate > 0). That first step is the reference.
//
// Closed loop (concurrency sweep): the knee is the first step after the
// reference whose p99 is at least 2× the reference's p99, or whose
// throughput grew by less than 10 % per doubling of the concurrency over
// the previous step: X_i/X_{i−1} < 1.1^log2(N_i/N_{i−1}). On doubling
// sweeps (1, 2, 4, 8 …) that is exactly the default rule "IOPS gain < 10 %";
// on finer sweeps (1, 2, 3, 4 …) the threshold scales with the load
// increase (5.7 % for 2→3), so that a step is not called a knee merely
// because it added less load. The rule is scale-invariant: two steps of
// ×2 that each gain 10 % pass or fail like one step of ×4 gaining 21 %.
// A step whose concurrency did not grow is judged by p99 only.
//
// Open loop (rate sweep): the knee is the first step that achieved less
// than 90 % of its intended rate (the reference too: a system already
// saturated at the lowest rate), or after the reference one whose p99 is
// at least 2× the reference's.
func (w Words) FindKnee(steps []Stats) *Knee {
	w = w.withDefaults()
	ref := -1
	prev := -1
	for i, s := range steps {
		if s.Ops < MinKneeOps {
			continue
		}
		if ref < 0 {
			ref = i
		} else if s.Closed() != steps[ref].Closed() {
			continue
		}
		if reason := kneeReason(steps, ref, prev, i, w); reason != "" {
			return &Knee{Index: i, Concurrency: s.Concurrency, Rate: s.Rate, IOPS: s.IOPS, P99US: s.P99US, Reason: reason}
		}
		prev = i
	}
	return nil
}

// kneeReason returns why step i is the knee, or "" when it is not; ref is
// the reference step and prev the previous step taking part (−1: none).
func kneeReason(steps []Stats, ref, prev, i int, w Words) string {
	s := steps[i]
	var reasons []string
	if !s.Closed() {
		if s.IOPS < kneeShortfall*s.Rate {
			reasons = append(reasons, fmt.Sprintf("at %s/s intended only %s %s were achieved (%.0f %% short)",
				number(s.Rate), number(s.IOPS), w.Throughput, 100*(1-s.IOPS/s.Rate)))
		}
	}
	if i != ref {
		if r := p99Reason(steps[ref], s, w); r != "" {
			reasons = append(reasons, r)
		}
	}
	if s.Closed() && prev >= 0 {
		if r := gainReason(steps[prev], s, w); r != "" {
			reasons = append(reasons, r)
		}
	}
	return strings.Join(reasons, "; ")
}

// p99Reason tests the p99 of s against the reference step's.
func p99Reason(ref, s Stats, w Words) string {
	if ref.P99US <= 0 || s.P99US < kneeP99Factor*ref.P99US {
		return ""
	}
	return fmt.Sprintf("p99 %s is %.1f× the p99 %s (%s)", usText(s.P99US), s.P99US/ref.P99US, loadLabel(ref, w), usText(ref.P99US))
}

// loadLabel names the reference load: "of 1 worker", "at 1000/s".
func loadLabel(s Stats, w Words) string {
	if !s.Closed() {
		return "at " + number(s.Rate) + "/s"
	}
	return "of " + w.count(s.Concurrency)
}

// count is "1 reader" or "4 readers".
func (w Words) count(n int) string {
	if n == 1 {
		return "1 " + w.Worker
	}
	return fmt.Sprintf("%d %s", n, w.Workers)
}

// gainReason tests the closed-loop throughput gain from prev to s.
func gainReason(prev, s Stats, w Words) string {
	if s.Concurrency <= prev.Concurrency || prev.Concurrency <= 0 || prev.IOPS <= 0 {
		return ""
	}
	load := float64(s.Concurrency) / float64(prev.Concurrency)
	need := math.Pow(kneeGainPerDoubling, math.Log2(load))
	got := s.IOPS / prev.IOPS
	if got >= need {
		return ""
	}
	var text string
	if got >= 1 {
		text = fmt.Sprintf("%d %s gave only %.0f %% more %s than %d", s.Concurrency, w.Workers, 100*(got-1), w.Throughput, prev.Concurrency)
	} else {
		text = fmt.Sprintf("%d %s gave %.0f %% less %s than %d", s.Concurrency, w.Workers, 100*(1-got), w.Throughput, prev.Concurrency)
	}
	if load != 2 {
		text += fmt.Sprintf(" (%.1f× the load: at least %.0f %% more expected, 10 %% per doubling)", load, 100*(need-1))
	}
	return text
}

// usText prints a latency in µs the way tables do: 412µs, 8.19ms.
func usText(us float64) string { return hist.FormatDuration(us * 1e3) }

// number prints a throughput or rate with three significant digits and no
// exponent: 85.3, 412, 5000, 123457.
func number(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100 || a == 0:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}
