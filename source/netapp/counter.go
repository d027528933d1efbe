package netapp

import (
	"math"
	"strconv"
	"strings"
)

// bucketLabels are the bucket names ONTAP prints after the counter name, in
// order: "<20us" counts latencies below 20 µs, "<40us" those in [20, 40) µs,
// ..., "<120s" those in [90, 120) s and ">120s" the rest. These 36 labels are
// the whole set the latency histograms of `stats show` use (nfs_protocol_*
// and the other *_latency histogram counters); a label outside it is a
// malformed line.
var bucketLabels = []string{
	"<20us", "<40us", "<60us", "<80us", "<100us", "<200us", "<400us", "<600us", "<800us",
	"<1ms", "<2ms", "<4ms", "<6ms", "<8ms", "<10ms", "<20ms", "<40ms", "<60ms", "<80ms",
	"<100ms", "<200ms", "<400ms", "<600ms", "<800ms",
	"<1s", "<2s", "<4s", "<6s", "<8s", "<10s", "<20s", "<30s", "<60s", "<90s", "<120s",
	">120s",
}

// bucketEdges are the histogram edges in µs that the labels imply: the zero
// bucket [0, 20) is "<20us", bucket i is [edges[i], edges[i+1]) and is named
// "<edges[i+1]", and the open top [120 s, +Inf) is ">120s".
var bucketEdges = []float64{
	20, 40, 60, 80, 100, 200, 400, 600, 800,
	1e3, 2e3, 4e3, 6e3, 8e3, 10e3, 20e3, 40e3, 60e3, 80e3,
	100e3, 200e3, 400e3, 600e3, 800e3,
	1e6, 2e6, 4e6, 6e6, 8e6, 10e6, 20e6, 30e6, 60e6, 90e6, 120e6,
	math.Inf(1),
}

// maxCount is the largest value of ONTAP's 64-bit counters.
const maxCount = 1 << 64

// lastLabel is the index of ">120s", the bucket that closes a record.
var lastLabel = len(bucketLabels) - 1

// labelIndex maps a bucket label to its slot: 0 is the zero bucket, slot s
// is custom bucket s−1.
var labelIndex = func() map[string]int {
	m := make(map[string]int, len(bucketLabels))
	for i, l := range bucketLabels {
		m[l] = i
	}
	return m
}()

// counterLine is one bucket of one histogram counter:
// "volume:vol1:nfs_protocol_read_latency.<20us:0".
type counterLine struct {
	object, instance, counter string
	slot                      int
	count                     float64
}

// key names the histogram a bucket line belongs to.
type key struct{ object, instance, counter string }

func (c counterLine) key() key { return key{c.object, c.instance, c.counter} }

// looksLikeBucket says a line is meant as a histogram bucket line (and is
// malformed when parseCounterLine rejects it), as opposed to chatter such as
// prompts, banners or scalar counters.
func looksLikeBucket(line string) bool {
	return strings.Contains(line, "_latency.<") || strings.Contains(line, "_latency.>")
}

// parseCounterLine reads "OBJECT:INSTANCE:COUNTER.LABEL:VALUE". The
// instance may hold colons; the counter must end in "_latency".
func parseCounterLine(line string) (c counterLine, reason string) {
	line = strings.TrimSpace(line)
	colon := strings.LastIndexByte(line, ':')
	if colon < 0 {
		return c, "no ':' before the count"
	}
	head, value := line[:colon], strings.TrimSpace(line[colon+1:])
	dot := max(strings.LastIndex(head, ".<"), strings.LastIndex(head, ".>"))
	if dot < 0 {
		return c, "no bucket label (.<20us ... .>120s) after the counter name"
	}
	label := head[dot+1:]
	slot, ok := labelIndex[label]
	if !ok {
		return c, "unknown bucket label " + strconv.Quote(label)
	}
	path := head[:dot]
	first, last := strings.IndexByte(path, ':'), strings.LastIndexByte(path, ':')
	if first <= 0 || last == first || last == len(path)-1 {
		return c, "want OBJECT:INSTANCE:COUNTER before the bucket label"
	}
	c = counterLine{object: path[:first], instance: path[first+1 : last], counter: path[last+1:], slot: slot}
	if !strings.HasSuffix(c.counter, "_latency") || strings.ContainsAny(c.counter, " \t") || strings.ContainsAny(c.object, " \t") {
		return counterLine{}, "counter " + strconv.Quote(c.counter) + " is not a *_latency histogram counter"
	}
	n, err := strconv.ParseFloat(value, 64)
	if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return counterLine{}, "count " + strconv.Quote(value) + " is not a non-negative number"
	}
	if n > maxCount {
		return counterLine{}, "count " + value + " exceeds a 64-bit counter"
	}
	c.count = n
	return c, ""
}

// intervalFromCommand finds "-i SEC" (or "-interval SEC") on an echoed
// `stats show` / `statistics show` command line.
func intervalFromCommand(line string) (seconds int, ok bool) {
	if !strings.Contains(line, "stats show") && !strings.Contains(line, "statistics show") {
		return 0, false
	}
	fields := strings.Fields(line)
	for i, f := range fields {
		var v string
		switch {
		case (f == "-i" || f == "-interval") && i+1 < len(fields):
			v = fields[i+1]
		case strings.HasPrefix(f, "-i") && len(f) > 2 && f[2] >= '0' && f[2] <= '9':
			v = f[2:]
		default:
			continue
		}
		n, err := strconv.Atoi(v)
		if err == nil && n > 0 && n <= 366*24*3600 {
			return n, true
		}
	}
	return 0, false
}
