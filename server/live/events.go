package live

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/stream"
	"github.com/latscope/latscope/view/report"
)

// Event types of a live stream.
const (
	// TypeInterval is one window of one series.
	TypeInterval = "interval"
	// TypeJob is a job's new state.
	TypeJob = "job"
	// TypeReplayed ends the replay of a resumed stream.
	TypeReplayed = "replayed"
	// TypeLost names a range a resumed stream did not replay.
	TypeLost = "lost"
	// TypeDropped ends a stream that did not keep up.
	TypeDropped = "dropped"
	// TypeShutdown ends every stream when the server stops.
	TypeShutdown = "shutdown"
	// TypeUnauthorized ends a stream whose credential was revoked, expired
	// or lowered (checked at every heartbeat).
	TypeUnauthorized = "unauthorized"
	// TypeReconnect ends a stream at Options.MaxAge.
	TypeReconnect = "reconnect"
)

// intervalRow is the data of an interval event: the row that GET
// /api/v1/series/{id}/intervals returns, with the series' id. Its offset_s
// counts from the Unix epoch: a stream has no first window to count from,
// and a source without a wall clock gives its time since it began.
type intervalRow struct {
	Series int64 `json:"series"`
	report.Interval
}

// origin is what an interval event's offset_s counts from.
var origin = stream.RelativeStart

// FormatID is a stream's event id: the end of an interval, in RFC 3339
// with nanoseconds, UTC.
func FormatID(end time.Time) string { return end.UTC().Format(time.RFC3339Nano) }

// ParseID reads a Last-Event-ID.
func ParseID(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: Last-Event-ID %q: want an event id of this stream (RFC 3339 time)", auth.ErrInvalid, s)
	}
	return t, nil
}

// seriesIndex knows the archive's series by source and key, read again
// when an interval brings a series it has not seen.
type seriesIndex struct {
	arch     *archive.Archive
	mu       sync.Mutex
	byKey    map[seriesKey]archive.SeriesInfo
	bySource map[string][]archive.SeriesInfo
}

type seriesKey struct {
	source string
	mean   bool
	key    stream.Key
}

func newSeriesIndex(arch *archive.Archive) *seriesIndex {
	return &seriesIndex{arch: arch, byKey: map[seriesKey]archive.SeriesInfo{}, bySource: map[string][]archive.SeriesInfo{}}
}

// lookup finds a series, reading the archive's list once on a miss.
func (x *seriesIndex) lookup(ctx context.Context, k seriesKey) (archive.SeriesInfo, bool, error) {
	if info, ok := x.byKey[k]; ok {
		return info, true, nil
	}
	if err := x.refresh(ctx); err != nil {
		return archive.SeriesInfo{}, false, err
	}
	info, ok := x.byKey[k]
	return info, ok, nil
}

func (x *seriesIndex) refresh(ctx context.Context) error {
	all, err := x.arch.Series(ctx)
	if err != nil {
		return err
	}
	clear(x.byKey)
	clear(x.bySource)
	for _, s := range all {
		x.byKey[seriesKey{s.Source, s.Mean, s.Key}] = s
		x.bySource[s.Source] = append(x.bySource[s.Source], s)
	}
	return nil
}

// events encodes an interval: one event per series it holds, or for a
// gap one per series of its source. A series without data in a window
// (none of its events happened) has no event.
func (x *seriesIndex) events(ctx context.Context, iv stream.Interval) ([]*encoded, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if iv.Gap {
		if _, ok := x.bySource[iv.Source]; !ok {
			if err := x.refresh(ctx); err != nil {
				return nil, err
			}
		}
		var out []*encoded
		for _, info := range x.bySource[iv.Source] {
			out = append(out, encode(info, gapRow(info, iv)))
		}
		return out, nil
	}
	out := make([]*encoded, 0, len(iv.Series)+len(iv.Means))
	// add encodes one series' row, if the series is in the archive (it is
	// once written; a miss is a series not written, skipped).
	add := func(k seriesKey, row func() report.Interval) error {
		info, ok, err := x.lookup(ctx, k)
		if ok {
			out = append(out, encode(info, row()))
		}
		return err
	}
	for _, s := range iv.Series {
		p := stream.Point{Start: iv.Start, Duration: iv.Duration, Relative: iv.Relative, Hist: s.Hist}
		if err := add(seriesKey{iv.Source, false, s.Key}, func() report.Interval { return report.HistRow(p, origin) }); err != nil {
			return out, err
		}
	}
	for _, m := range iv.Means {
		p := stream.MeanPoint{Start: iv.Start, Duration: iv.Duration, Relative: iv.Relative, Count: m.Count, Sum: m.Sum}
		if err := add(seriesKey{iv.Source, true, m.Key}, func() report.Interval { return report.MeanRow(p, m.Unit, m.Quantity, origin) }); err != nil {
			return out, err
		}
	}
	return out, nil
}

func gapRow(info archive.SeriesInfo, iv stream.Interval) report.Interval {
	if info.Mean {
		return report.MeanRow(stream.MeanPoint{Start: iv.Start, Duration: iv.Duration, Relative: iv.Relative, Gap: true}, 0, stream.Latency, origin)
	}
	return report.HistRow(stream.Point{Start: iv.Start, Duration: iv.Duration, Relative: iv.Relative, Gap: true}, origin)
}

func encode(info archive.SeriesInfo, row report.Interval) *encoded {
	data, _ := json.Marshal(intervalRow{Series: info.ID, Interval: row}) // plain values: cannot fail
	return &encoded{series: info, event: httpsec.SSEEvent{Type: TypeInterval, Data: data}}
}

// Filter selects a stream's series: those matching Pattern (a --series
// glob, matched against the event and the job's name) or listed in IDs;
// neither selects every series.
type Filter struct {
	Pattern string
	IDs     []int64
	match   func(archive.SeriesInfo) bool
}

// Bounds of a filter, so that a request cannot make every interval cost
// a huge regular expression or list.
const (
	maxPattern = 1024
	maxIDs     = 1000
)

// ParseFilter reads the series= glob and the id= list (repeated or
// comma-separated) of a request.
func ParseFilter(pattern string, ids []string) (Filter, error) {
	f := Filter{Pattern: pattern}
	if len(pattern) > maxPattern {
		return f, fmt.Errorf("%w: series: a glob of more than %d bytes", auth.ErrInvalid, maxPattern)
	}
	var err error
	if f.match, err = archive.SeriesMatcher(pattern); err != nil {
		return f, fmt.Errorf("%w: series: %v", auth.ErrInvalid, err)
	}
	for _, list := range ids {
		for s := range strings.SplitSeq(list, ",") {
			id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil || id <= 0 {
				return f, fmt.Errorf("%w: id %q: want positive series ids from /api/v1/series", auth.ErrInvalid, s)
			}
			if f.IDs = append(f.IDs, id); len(f.IDs) > maxIDs {
				return f, fmt.Errorf("%w: id: more than %d series ids; select them with a glob", auth.ErrInvalid, maxIDs)
			}
		}
	}
	return f, nil
}

func (f Filter) wantsSeries(s archive.SeriesInfo) bool {
	switch {
	case slices.Contains(f.IDs, s.ID):
		return true
	case f.Pattern == "" && len(f.IDs) > 0:
		return false
	}
	return f.match == nil || f.match(s)
}

// wantsJob: job events go to streams whose glob matches the job's name,
// and to streams without a glob.
func (f Filter) wantsJob(name string) bool {
	return f.Pattern == "" || f.match == nil || f.match(archive.SeriesInfo{Source: name})
}
