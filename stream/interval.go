// Package stream is latscope's stream of latency histograms: sources emit
// Intervals (an observation window with one histogram per series), Differ
// turns cumulative snapshots into such intervals, Recording gathers them per
// series for reports and images, and Grid resamples them onto wall-clock
// columns for heat maps.
package stream

import (
	"errors"
	"fmt"
	"time"

	"github.com/latscope/latscope/hist"
)

// Key identifies a series: one wait event on one instance, optionally kept
// apart per source file (--by file).
type Key struct {
	Event    string
	Instance string
	Source   string
}

// String returns "event", "event @instance" or "event @instance [source]".
func (k Key) String() string {
	s := k.Event
	if k.Instance != "" {
		s += " @" + k.Instance
	}
	if k.Source != "" {
		s += " [" + k.Source + "]"
	}
	return s
}

// SeriesHist is one series' histogram inside an interval.
type SeriesHist struct {
	Key  Key
	Hist *hist.Histogram
}

// Interval is one observation window of one source: the events each series
// had in [Start, Start+Duration). A series absent from Series had no events in
// a window the source observed; a Gap interval is a window the source could
// not observe (a counter reset, a restart), drawn as "no data".
type Interval struct {
	Source   string
	Start    time.Time
	Duration time.Duration
	// Relative says Start is time since the source began (counted from the
	// Unix epoch) because the source carried no usable wall-clock time.
	Relative bool
	Gap      bool
	Series   []SeriesHist
	// Means are series known only as a count and a total per window.
	Means []SeriesMean
}

// End returns the end of the window.
func (iv Interval) End() time.Time { return iv.Start.Add(iv.Duration) }

// RelativeStart is the origin of relative time.
var RelativeStart = time.Unix(0, 0).UTC()

// Errors Validate returns.
var (
	ErrNoDuration = errors.New("interval has no positive duration")
	ErrNoStart    = errors.New("interval has no start time")
)

// Validate checks an interval as every source must emit it.
func (iv Interval) Validate() error {
	if iv.Duration <= 0 {
		return fmt.Errorf("%s at %s: %w", iv.Source, iv.Start.Format(time.RFC3339), ErrNoDuration)
	}
	if iv.Start.IsZero() {
		return fmt.Errorf("%s: %w", iv.Source, ErrNoStart)
	}
	for _, s := range iv.Series {
		if s.Hist == nil {
			return fmt.Errorf("%s: series %s has no histogram", iv.Source, s.Key)
		}
		if err := s.Hist.Validate(); err != nil {
			return fmt.Errorf("%s: series %s: %w", iv.Source, s.Key, err)
		}
	}
	for _, m := range iv.Means {
		if err := m.Validate(); err != nil {
			return fmt.Errorf("%s: %w", iv.Source, err)
		}
	}
	return nil
}
