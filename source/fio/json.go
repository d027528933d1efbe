package fio

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// fioVersionKey is the first key of every fio JSON document.
const fioVersionKey = `"fio version"`

// detectJSONGiveUp is how far into the input fio's preamble may go.
const detectJSONGiveUp = 16 << 10

// DetectJSON says Yes when the first JSON object of the input starts with
// the key "fio version", after nothing but fio's own preamble lines; No as
// soon as a line is neither.
func DetectJSON(prefix []byte) input.Verdict {
	scan := input.LineScan{Partial: true, GiveUp: detectJSONGiveUp}
	for l := range scan.Lines(prefix) {
		t := bytes.TrimSpace(l.Text)
		if len(t) > 0 && t[0] == '{' {
			return detectVersionKey(bytes.TrimSpace(l.Rest[bytes.IndexByte(l.Rest, '{')+1:]))
		}
		if l.Complete && len(t) > 0 && !isPreamble(t) {
			return input.No
		}
	}
	return scan.Undecided(prefix)
}

// detectVersionKey looks at what follows the opening brace.
func detectVersionKey(after []byte) input.Verdict {
	switch {
	case bytes.HasPrefix(after, []byte(fioVersionKey)):
		return input.Yes
	case len(after) < len(fioVersionKey) && bytes.HasPrefix([]byte(fioVersionKey), after):
		return input.NeedMore
	}
	return input.No
}

// isPreamble reports whether a line is one fio prints on standard output
// before its JSON: job descriptions, "...", the version, "Starting N
// processes", file layout notes, warnings and ETA lines.
func isPreamble(t []byte) bool {
	s := string(t)
	for _, p := range []string{"fio-", "Starting ", "note:", "fio:", "Jobs:", "..."} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return strings.Contains(s, ": (g=") || strings.Contains(s, ": Laying out IO file")
}

// OpenJSON returns a Source over fio JSON results; nothing is read until it
// is run.
func OpenJSON(in source.Input, opts source.Options) (source.Source, error) {
	return source.NewInputSource(in, func(ctx context.Context, emit func(stream.Interval) error) error {
		r := &jsonReader{in: in, opts: opts, bounds: binBounds(0), once: input.NewOnceWarnings(in.Diag, in.Name)}
		return r.run(ctx, emit)
	})
}

// jsonReader is one run over fio JSON results.
type jsonReader struct {
	in     source.Input
	opts   source.Options
	bounds []float64
	once   *input.OnceWarnings
}

// errNoBins says the results hold percentiles only.
var errNoBins = errors.New("fio JSON has latency percentiles but no histogram bins: " +
	"it was written with --output-format=json; rerun fio with --output-format=json+ (percentiles are not a histogram)")

// run reads every fio JSON document of the input (text between documents,
// such as fio's normal output, is skipped) and emits one interval per job
// window, in time order per document.
func (s *jsonReader) run(ctx context.Context, emit func(stream.Interval) error) error {
	data, err := io.ReadAll(s.in.Reader)
	if err != nil {
		return fmt.Errorf("%s: %w", s.in.Name, err)
	}
	var st docStats
	for pos := 0; ; {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := nextObject(data, pos)
		if start < 0 {
			break
		}
		doc, end, perr := s.parseDoc(data, start)
		ivs := s.intervals(doc, &st)
		for _, iv := range ivs {
			if err := emit(iv); err != nil {
				return err
			}
		}
		if perr != nil {
			if st.series == 0 {
				return perr
			}
			s.in.Diag.Malformed(s.in.Name, lineAt(data, perr.offset), perr.Error())
			break
		}
		pos = end
	}
	if st.series == 0 && st.withoutBins > 0 {
		return fmt.Errorf("%s: %w", s.in.Name, errNoBins)
	}
	return nil
}

// docStats counts what the documents held.
type docStats struct {
	series      int // series with bins
	withoutBins int // clat blocks with events but no bins
}

// nextObject returns the offset of the next line starting with '{' at or
// after pos, or −1.
func nextObject(data []byte, pos int) int {
	for pos < len(data) {
		line, _, _ := bytes.Cut(data[pos:], []byte("\n"))
		t := bytes.TrimLeft(line, " \t\r")
		if len(t) > 0 && t[0] == '{' {
			return pos + len(line) - len(t)
		}
		pos += len(line) + 1
	}
	return -1
}

// lineAt returns the 1-based line number of offset off.
func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// document is what one fio JSON document says.
type document struct {
	endMs int64 // report time (timestamp_ms, else timestamp·1000); 0: unknown
	jobs  []parsedJob
}

// parsedJob is one job entry with its line.
type parsedJob struct {
	line int
	job  jobJSON
}

// jobJSON is the part of a job entry latscope reads.
type jobJSON struct {
	Name       string      `json:"jobname"`
	Hostname   string      `json:"hostname"`
	JobStart   json.Number `json:"job_start"`
	JobRuntime json.Number `json:"job_runtime"`
	Read       *ddirJSON   `json:"read"`
	Write      *ddirJSON   `json:"write"`
	Trim       *ddirJSON   `json:"trim"`
	Mixed      *ddirJSON   `json:"mixed"` // unified_rw_reporting
	Sync       *ddirJSON   `json:"sync"`  // fsync/fdatasync latencies
}

// ddirJSON is one data direction of a job.
type ddirJSON struct {
	Runtime json.Number `json:"runtime"`
	Slat    *latJSON    `json:"slat_ns"`
	Clat    *latJSON    `json:"clat_ns"`
	Lat     *latJSON    `json:"lat_ns"`
	// fio 2.x wrote microseconds under these names, with other bins.
	OldClat json.RawMessage `json:"clat"`
}

// latJSON is one latency block: statistics, percentiles and (json+) bins.
type latJSON struct {
	N    json.Number            `json:"N"`
	Mean json.Number            `json:"mean"`
	Bins map[string]json.Number `json:"bins"`
}

// directions lists a job's data directions in fio's order.
func (j *jobJSON) directions() []struct {
	name string
	d    *ddirJSON
} {
	return []struct {
		name string
		d    *ddirJSON
	}{{"read", j.Read}, {"write", j.Write}, {"trim", j.Trim}, {"mixed", j.Mixed}, {"sync", j.Sync}}
}

// parseError is a document that could not be read past offset.
type parseError struct {
	name   string
	line   int
	offset int
	err    error
}

func (e *parseError) Error() string {
	return fmt.Sprintf("%s:%d: invalid fio JSON: %v", e.name, e.line, e.err)
}

func (e *parseError) Unwrap() error { return e.err }

// parseDoc reads the document starting at data[start]: its report time and
// its jobs, each decoded on its own so that one bad job does not lose the
// others. It returns what it read before any syntax error.
func (s *jsonReader) parseDoc(data []byte, start int) (document, int, *parseError) {
	var doc document
	dec := json.NewDecoder(bytes.NewReader(data[start:]))
	dec.UseNumber()
	fail := func(err error) (document, int, *parseError) {
		off := start + int(dec.InputOffset())
		var se *json.SyntaxError
		if errors.As(err, &se) {
			off = start + int(se.Offset)
		}
		return doc, len(data), &parseError{name: s.in.Name, line: lineAt(data, off), offset: off, err: err}
	}
	if _, err := dec.Token(); err != nil {
		return fail(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		key, _ := tok.(string)
		switch key {
		case "jobs", "client_stats":
			if err := s.parseJobs(dec, data, start, &doc); err != nil {
				return fail(err)
			}
		case "timestamp", "timestamp_ms":
			var n json.Number
			if err := dec.Decode(&n); err != nil {
				return fail(err)
			}
			if v, err := n.Int64(); err == nil && v > 0 && (key == "timestamp_ms" || doc.endMs == 0) {
				doc.endMs = v
				if key == "timestamp" {
					doc.endMs = v * 1000
				}
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return fail(err)
	}
	return doc, start + int(dec.InputOffset()), nil
}

// parseJobs reads the jobs array; a job that does not decode is reported
// and skipped.
func (s *jsonReader) parseJobs(dec *json.Decoder, data []byte, start int, doc *document) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("jobs is not an array")
	}
	for dec.More() {
		off := start + int(dec.InputOffset())
		for off < len(data) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
			off++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		line := lineAt(data, off)
		var j jobJSON
		if err := json.Unmarshal(raw, &j); err != nil {
			s.in.Diag.Malformed(s.in.Name, line, fmt.Sprintf("job entry skipped: %v", err))
			continue
		}
		doc.jobs = append(doc.jobs, parsedJob{line: line, job: j})
	}
	_, err = dec.Token()
	return err
}

// window is one job's observation window.
type window struct {
	start    int64 // ms since the epoch (or since RelativeStart)
	duration int64 // ms
}

// intervals turns a document's jobs into intervals, one per distinct job
// window, series of the same key in one window summed (numjobs clones
// without group_reporting share a name).
func (s *jsonReader) intervals(doc document, st *docStats) []stream.Interval {
	byWindow := map[window]*stream.Interval{}
	var order []window
	for _, pj := range doc.jobs {
		j := &pj.job
		if j.Name == "All clients" {
			continue // client/server mode's sum of the other entries
		}
		series := s.jobSeries(pj, st)
		if len(series) == 0 {
			continue
		}
		w := jobWindow(j, doc.endMs)
		iv := byWindow[w]
		if iv == nil {
			iv = s.newInterval(w, doc.endMs == 0)
			byWindow[w] = iv
			order = append(order, w)
		}
		iv.Series = mergeSeries(iv.Series, series)
	}
	slices.SortStableFunc(order, func(a, b window) int { return cmp.Compare(a.start, b.start) })
	out := make([]stream.Interval, 0, len(order))
	for _, w := range order {
		out = append(out, *byWindow[w])
	}
	return out
}

func (s *jsonReader) newInterval(w window, relative bool) *stream.Interval {
	iv := &stream.Interval{Source: s.in.Name, Duration: time.Duration(w.duration) * time.Millisecond, Relative: relative}
	if relative {
		iv.Start = stream.RelativeStart.Add(time.Duration(w.start) * time.Millisecond)
	} else {
		iv.Start = time.UnixMilli(w.start).In(s.opts.Loc())
	}
	return iv
}

// jobWindow returns when a job ran: from job_start (newer fio) or else
// backwards from the report time, over the longest direction's runtime
// (job_runtime sums the jobs of a group_reporting group).
func jobWindow(j *jobJSON, endMs int64) window {
	var dur int64
	for _, d := range j.directions() {
		if d.d != nil {
			if v, err := d.d.Runtime.Int64(); err == nil {
				dur = max(dur, v)
			}
		}
	}
	if dur <= 0 {
		if v, err := j.JobRuntime.Int64(); err == nil {
			dur = v
		}
	}
	dur = max(dur, 1)
	if start, err := j.JobStart.Int64(); err == nil && start > 0 {
		return window{start: start, duration: dur}
	}
	if endMs == 0 {
		return window{duration: dur}
	}
	return window{start: endMs - dur, duration: dur}
}

// mergeSeries adds series into list, summing those with the same key.
func mergeSeries(list, add []stream.SeriesHist) []stream.SeriesHist {
	for _, a := range add {
		i := slices.IndexFunc(list, func(s stream.SeriesHist) bool { return s.Key == a.Key })
		if i < 0 {
			list = append(list, a)
			continue
		}
		list[i].Hist.Merge(a.Hist)
	}
	return list
}

// jobSeries builds the histograms of one job: one per direction and
// latency kind that has bins.
func (s *jsonReader) jobSeries(pj parsedJob, st *docStats) []stream.SeriesHist {
	j := &pj.job
	var out []stream.SeriesHist
	for _, d := range j.directions() {
		if d.d == nil {
			continue
		}
		if d.d.Clat == nil && len(d.d.OldClat) > 0 {
			s.once.Warn("fio2", "job %q: fio 2.x results (latencies in µs under clat/lat) are not read; use fio 3.x", j.Name)
			continue
		}
		kinds := []struct {
			name string
			lat  *latJSON
		}{{"slat", d.d.Slat}, {"clat", d.d.Clat}, {"lat", d.d.Lat}}
		for _, k := range kinds {
			if k.lat == nil {
				continue
			}
			if len(k.lat.Bins) == 0 {
				if n, err := k.lat.N.Int64(); err == nil && n > 0 && k.name == "clat" {
					st.withoutBins++
				}
				continue
			}
			event := fmt.Sprintf("%s %s %s", j.Name, d.name, k.name)
			if !s.opts.KeepEvent(event) {
				continue
			}
			h := s.binsHistogram(pj.line, event, k.lat)
			if h == nil {
				continue
			}
			st.series++
			out = append(out, stream.SeriesHist{Key: stream.Key{Event: event, Instance: j.Hostname}, Hist: h})
		}
	}
	if st.series > 0 && st.withoutBins > 0 {
		s.once.Warn("somebins", "some jobs have latency percentiles but no bins; only the jobs with bins are read")
	}
	return out
}

// binsHistogram builds one latency block's histogram on fio's bins. Its
// sum is fio's exact mean times N when the bins hold all N events.
func (s *jsonReader) binsHistogram(line int, event string, lat *latJSON) *hist.Histogram {
	h, err := hist.NewCustom(hist.Nanosecond, s.bounds)
	if err != nil {
		return nil // cannot happen: fio's edges ascend
	}
	keys := make([]string, 0, len(lat.Bins))
	for k := range lat.Bins {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(len(a), len(b))*2 + cmp.Compare(a, b) })
	for _, k := range keys {
		idx, count, reason := parseBin(k, lat.Bins[k])
		if reason != "" {
			s.in.Diag.Malformed(s.in.Name, line, fmt.Sprintf("%s: bin %q skipped: %s", event, k, reason))
			continue
		}
		if idx == platNR-1 && count > 0 {
			s.once.Warn("top", "%s: %g I/Os in fio's last bin, which also holds every latency above %s; read as that bin's range",
				event, count, hist.FormatDuration(topEdgeNs))
		}
		_ = h.AddCustom(idx-1, count)
	}
	total := h.Count()
	n, nerr := strconv.ParseFloat(string(lat.N), 64)
	mean, merr := strconv.ParseFloat(string(lat.Mean), 64)
	switch {
	case nerr == nil && n != total:
		s.once.Warn("n "+event, "%s: fio's N is %g but the bins hold %g I/Os; sums estimated from the bins", event, n, total)
	case nerr == nil && merr == nil && mean >= 0 && !math.IsInf(mean, 0) && total > 0:
		h.Sum, h.SumExact = mean*total, true
	}
	return h
}

// parseBin reads one bins entry: the key is the value fio prints for a bin
// (plat_idx_to_val), the value its count.
func parseBin(key string, value json.Number) (idx int, count float64, reason string) {
	v, err := strconv.ParseUint(key, 10, 64)
	if err != nil {
		return 0, 0, "key is not a latency in ns"
	}
	idx = binIndex(v)
	if binValue(idx) != v {
		return 0, 0, fmt.Sprintf("%d ns is not the value of a fio bin (bin %d prints %d)", v, idx, binValue(idx))
	}
	c, err := strconv.ParseFloat(string(value), 64)
	if err != nil || c < 0 || math.IsInf(c, 0) || c != math.Trunc(c) {
		return 0, 0, fmt.Sprintf("count %q is not a whole number of I/Os", string(value))
	}
	return idx, c, ""
}
