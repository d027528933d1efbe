package promnative

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/stream"
)

// Mean series add up as counters: a latency mean's sum in seconds, a host
// figure's as given, with its quantity; rate(sum)/rate(count) over two
// windows is the merged value.
func TestMeanSeriesAreCounters(t *testing.T) {
	m := NewMapper(Options{Host: "db01"})
	start := time.Date(2026, 11, 26, 5, 0, 0, 0, time.UTC)
	iv := func(k int, util, awaitMs, reads float64) stream.Interval {
		return stream.Interval{Source: "host:db01", Start: start.Add(time.Duration(k) * time.Second), Duration: time.Second, Means: []stream.SeriesMean{
			{Key: stream.Key{Event: "disk.%util", Instance: "vda"}, Sum: util * 1000, Count: 1000, Unit: stream.QuantityUnit, Quantity: stream.Percent},
			{Key: stream.Key{Event: "disk.r_await", Instance: "vda"}, Sum: awaitMs * reads, Count: reads, Unit: hist.Millisecond},
		}}
	}
	m.AddMeans("host", iv(0, 50, 2, 100))
	got := m.AddMeans("host", iv(1, 10, 4, 300))
	if len(got) != 2 {
		t.Fatalf("%d series", len(got))
	}
	byEvent := map[string]MeanSeries{}
	for _, ms := range got {
		byEvent[labelValue(ms.Labels, "event")] = ms
	}
	util, await := byEvent["disk.%util"], byEvent["disk.r_await"]
	if v := util.Sum / util.Count; v != 30 || labelValue(util.Labels, "quantity") != "percent" {
		t.Errorf("%%util over both windows: %v (%v), want 30 percent", v, util.Labels)
	}
	if v := await.Sum / await.Count; math.Abs(v-0.0035) > 1e-15 || labelValue(await.Labels, "quantity") != "seconds" || await.Count != 400 {
		t.Errorf("r_await: %v s over %v reads (%v), want 0.0035 s over 400", v, await.Count, await.Labels)
	}
	want := `[{event disk.%util} {host db01} {instance vda} {job host} {quantity percent} {source_kind host}]`
	if fmt.Sprint(util.Labels) != want || !util.Timestamp.Equal(start.Add(2*time.Second)) {
		t.Errorf("labels %v at %v, want %s at the second window's end", util.Labels, util.Timestamp, want)
	}
	if n := len(m.MeanSeries()); n != 2 || len(m.Series()) != 0 {
		t.Errorf("%d mean series, %d histograms", n, len(m.Series()))
	}
}

// A job's mean series are capped; the histograms are not touched.
func TestMeanSeriesCap(t *testing.T) {
	m := NewMapper(Options{})
	iv := stream.Interval{Source: "pg", Start: time.Unix(1e9, 0), Duration: time.Second}
	for i := range MaxMeansPerJob + 5 {
		iv.Means = append(iv.Means, stream.SeriesMean{Key: stream.Key{Event: fmt.Sprint("statement ", i)}, Sum: 1, Count: 1, Unit: hist.Millisecond})
	}
	if n := len(m.AddMeans("pg", iv)); n != MaxMeansPerJob || len(m.MeanSeries()) != MaxMeansPerJob {
		t.Errorf("%d series kept, want %d", n, MaxMeansPerJob)
	}
}

func labelValue(ls []Label, name string) string {
	for _, l := range ls {
		if l.Name == name {
			return l.Value
		}
	}
	return ""
}
