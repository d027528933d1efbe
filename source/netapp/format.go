// Package netapp reads the latency histogram counters NetApp ONTAP prints
// with `stats show -r -n ITER -i SEC volume:VOL:nfs_protocol_read_latency`
// (and _write_latency): one line per bucket,
//
//	volume:vol1:nfs_protocol_read_latency.<20us:0
//	...
//	volume:vol1:nfs_protocol_read_latency.>120s:0
//
// It keeps ONTAP's own bucket edges (not powers of two) in custom-bound
// histograms instead of re-binning them as PyLatencyMap's NetApp connector
// did. The 36 labels read are <20us <40us <60us <80us <100us <200us <400us
// <600us <800us <1ms <2ms <4ms <6ms <8ms <10ms <20ms <40ms <60ms <80ms
// <100ms <200ms <400ms <600ms <800ms <1s <2s <4s <6s <8s <10s <20s <30s
// <60s <90s <120s >120s: "<20us" is [0, 20 µs), "<40us" [20, 40 µs), ...
// ">120s" the open top [120 s, ∞). Any other label is a malformed line.
// A record (one counter of one instance) ends at its >120s line; an
// iteration ends when a counter repeats or every counter seen so far has
// reported. Counters are cumulative (--counts interval reads each
// iteration as its own interval's counts); time is relative, iterations
// `-i SEC` apart as an echoed command line says, else --interval.
package netapp

import (
	"bytes"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
)

// FormatName is the name users give to --input-format.
const FormatName = "netapp"

// detectGiveUp is how much input without a bucket line makes Detect say No:
// all that detection reads, because the counters follow the ssh session's
// and the cluster shell's banners.
const detectGiveUp = input.DetectLimit

// maxDetectLine is the length of a line that, before any bucket line, says
// No at once: no counter listing has one.
const maxDetectLine = 8 << 10

// Format returns the NetApp ONTAP stats format.
func Format() source.Format {
	return source.Format{
		Name: FormatName,
		Description: "NetApp ONTAP `stats show -r` latency histogram counters (<20us ... >120s) kept on ONTAP's own bucket edges; " +
			"one series per counter (Event, e.g. nfs_protocol_read_latency) and instance (Instance, the volume); " +
			"counts cumulative by default (--counts interval if each iteration holds only its own interval); " +
			"interval from the `-i SEC` of an echoed command line, else --interval (default 1s); relative time",
		Detection: "a line OBJECT:INSTANCE:COUNTER_latency.<20us:COUNT (any ONTAP bucket label); counts cumulative",
		Example:   "latscope report netapp_stats.txt",
		Detect:    Detect,
		Open:      Open,
	}
}

// Detect says Yes once a complete line of the prefix is a histogram bucket
// line, No when 64 KiB hold none or a line of 8 KiB comes first, NeedMore
// otherwise.
func Detect(prefix []byte) input.Verdict {
	scan := input.LineScan{GiveUp: detectGiveUp}
	for l := range scan.Lines(prefix) {
		if bytes.IndexByte(l.Rest, '\n') >= maxDetectLine {
			return input.No // a line of 8 KiB (its CR included) is no counter listing
		}
		if bytes.Contains(l.Text, []byte("_latency.")) {
			if _, reason := parseCounterLine(string(l.Text)); reason == "" {
				return input.Yes
			}
		}
	}
	return scan.Undecided(prefix)
}

// Open returns a Source that reads the counters and emits one interval per
// iteration (after the first, the baseline, when counts are cumulative).
func Open(in source.Input, opts source.Options) (source.Source, error) {
	return source.NewLineSource(in, opts, maxLineLen, newParser)
}

// maxLineLen bounds the memory one input line may take: counter lines are
// shorter than 200 bytes, so longer ones are garbage and only reported.
const maxLineLen = 64 << 10
