// Package prometheus reads Prometheus classic histograms from the text
// exposition format (what /metrics serves, `curl` saves, or latscope's own
// prometheus output writes): `# TYPE x histogram`, x_bucket{le="..."},
// x_sum, x_count, optional sample timestamps in ms.
//
// One series per metric name and label set (le aside): Event is the metric
// name, Instance the labels as sorted "k=v,k=v". Bucket counts are
// cumulative in le and over time: le is de-accumulated onto the
// histogram's own edges (custom bounds, never re-binned) and deltas are
// taken between scrapes (a counter going backwards, as when a process
// restarts, is a gap). Scrapes are told apart by their sample timestamps,
// else by a series or a # TYPE line repeating; Prometheus' own text parser
// (expfmt) reads every scrape.
package prometheus

import (
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// FormatName is the name users give to --input-format.
const FormatName = "prometheus"

// detectGiveUp is how much input without a # TYPE line makes Detect say No.
const detectGiveUp = 4 << 10

// typeKinds are the metric types a # TYPE line may name.
var typeKinds = map[string]bool{"counter": true, "gauge": true, "histogram": true, "summary": true,
	"untyped": true, "gaugehistogram": true, "info": true, "stateset": true, "unknown": true}

// Format returns the Prometheus text exposition format.
func Format() source.Format {
	return source.Format{
		Name: FormatName,
		Description: "Prometheus classic histograms in the text exposition format (x_bucket{le=...}, x_sum, x_count): " +
			"one series per metric (Event) and label set (Instance, sorted k=v,k=v); buckets kept on their le edges; " +
			"values in the unit of the name's suffix (_seconds, _milliseconds, _microseconds...), else --unit, else seconds; " +
			"counts cumulative by default (deltas between scrapes, a reset is a gap; --counts interval for per-scrape counts); " +
			"scrapes timed by sample timestamps (ms; before 2000 read as relative time), else --interval (default 15s) apart; " +
			"_sum gives exact sums; histograms in non-time units (_bytes...) are skipped unless named with --event; " +
			"latscope's own output (latscope_latency_seconds{event,instance,source}) reads back into its original series",
		Detection: "a line # TYPE NAME KIND (counter, gauge, histogram, summary, untyped...); counts cumulative",
		Example:   "curl -s localhost:9100/metrics > scrape.prom; latscope report scrape.prom",
		Detect:    Detect,
		Open:      Open,
	}
}

// Detect says Yes once a complete line is a # TYPE line, No after 4 KiB
// without one.
func Detect(prefix []byte) input.Verdict {
	scan := input.LineScan{GiveUp: detectGiveUp}
	for l := range scan.Lines(prefix) {
		if sc := scanLine(string(l.Text)); sc.kind == lineType && typeKinds[sc.typ] {
			return input.Yes
		}
	}
	return scan.Undecided(prefix)
}

// Open returns a Source that reads the scrapes, emitting an interval once
// the next scrape begins (or the input ends).
func Open(in source.Input, opts source.Options) (source.Source, error) {
	return source.NewLineSource(in, opts, maxLineLen, newParser)
}

// maxLineLen bounds the memory one input line may take: exposition lines
// are a few hundred bytes, so longer ones are garbage and only reported.
const maxLineLen = 64 << 10
