package promnative

import (
	"slices"
	"strings"
	"time"

	"github.com/latscope/latscope/stream"
)

// Mean series (a count and a total per window: statement means, and the
// host figures of host: such as r/s, %util or r_await) are exposed as two
// counters, MeanMetric_sum and MeanMetric_count, with a quantity label:
// rate(..._sum[w]) / rate(..._count[w]) is the series' value over any
// window w, exactly as latscope merges windows. Latency means have
// quantity "seconds" and their sum in seconds; the others the stream's
// quantity (percent, per_second, kB_per_second, kB, count, ratio) and
// their sum as the source gave it. Counters rather than a summary: a
// summary's count is an integer in the protobuf exposition, and these
// counts are seconds or milliseconds.
const MeanMetric = "latscope_mean"

// MaxMeansPerJob bounds a job's mean series: a host has a few hundred
// (CPUs × states, devices × columns), a statement sampler one per
// statement, which may grow without end.
const MaxMeansPerJob = 2000

// MeanSeries is one mean series' cumulative state at Timestamp. Labels
// are sorted, without the metric name: the caller writes it twice, with
// the suffixes _sum and _count.
type MeanSeries struct {
	Labels     []Label
	Sum, Count float64
	Timestamp  time.Time
}

type meanState struct {
	labels     []Label
	sum, count float64
	at         time.Time
}

// AddMeans counts a job's interval's mean series and returns the
// cumulative state of those it touched. Beyond MaxMeansPerJob a job's new
// mean series are left out (docs/fleet.md says so).
func (m *Mapper) AddMeans(job string, iv stream.Interval) []MeanSeries {
	if iv.Gap || len(iv.Means) == 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j := m.kindOf(job, iv)
	end := iv.End()
	out := make([]MeanSeries, 0, len(iv.Means))
	for _, mean := range iv.Means {
		k := seriesKey{job: job, event: mean.Key.Event, instance: mean.Key.Instance}
		st := m.means[k]
		if st == nil {
			if j.means >= MaxMeansPerJob {
				continue
			}
			j.means++
			st = &meanState{labels: m.meanLabels(k, j.kind, mean.Quantity)}
			m.means[k] = st
		}
		sum := mean.Sum
		if mean.Quantity.IsLatency() {
			sum = seconds(mean.Sum, mean.Unit)
		}
		st.sum += sum
		st.count += mean.Count
		st.at = end
		out = append(out, st.snapshot())
	}
	return out
}

// MeanSeries returns the cumulative state of every mean series, sorted
// by labels: what a scrape exposes.
func (m *Mapper) MeanSeries() []MeanSeries {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]MeanSeries, 0, len(m.means))
	for _, st := range m.means {
		out = append(out, st.snapshot())
	}
	slices.SortFunc(out, func(a, b MeanSeries) int { return compareLabels(a.Labels, b.Labels) })
	return out
}

func (st *meanState) snapshot() MeanSeries {
	return MeanSeries{Labels: slices.Clone(st.labels), Sum: st.sum, Count: st.count, Timestamp: st.at}
}

// meanLabels are a mean series' labels: the histogram series' (without
// the name) and its quantity.
func (m *Mapper) meanLabels(k seriesKey, kind string, q stream.Quantity) []Label {
	quantity := string(q)
	if q.IsLatency() {
		quantity = "seconds"
	}
	ls := slices.DeleteFunc(m.labels(k, kind), func(l Label) bool { return l.Name == "__name__" })
	ls = append(ls, Label{"quantity", quantity})
	slices.SortFunc(ls, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
	return ls
}
