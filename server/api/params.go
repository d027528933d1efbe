package api

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/server/auth"
	"github.com/latscope/latscope/source"
)

// ParseTime reads a from/to parameter as the CLI's --from and --to take
// it (source.ParseWhen: RFC 3339, "now", relative like "-1h" or "-7d", a
// date and time without a zone, read as UTC); empty is no bound.
func ParseTime(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return source.ParseWhen(s, now, time.UTC)
}

// ParseResolution reads "auto" (or empty), "raw", or the step of one of
// the archive's tiers ("1m").
func ParseResolution(s string, tiers []archive.Tier) (time.Duration, error) {
	switch s {
	case "", "auto":
		return archive.Auto, nil
	case "raw":
		return archive.Raw, nil
	}
	var steps []string
	d, err := time.ParseDuration(s)
	for _, t := range tiers {
		if t.Step > 0 {
			if err == nil && t.Step == d {
				return d, nil
			}
			steps = append(steps, t.Step.String())
		}
	}
	return 0, fmt.Errorf("%q: want auto, raw or a tier's step (%s)", s, strings.Join(steps, ", "))
}

func resolutionName(d time.Duration) string {
	switch d {
	case archive.Auto:
		return "auto"
	case archive.Raw:
		return "raw"
	}
	return d.String()
}

// window reads a request's from, to and resolution; its errors are
// auth.ErrInvalid (400).
func (d Data) window(q url.Values) (from, to time.Time, resolution time.Duration, err error) {
	now := time.Now()
	if from, err = ParseTime(q.Get("from"), now); err != nil {
		return from, to, 0, fmt.Errorf("%w: from: %v", auth.ErrInvalid, err)
	}
	if to, err = ParseTime(q.Get("to"), now); err != nil {
		return from, to, 0, fmt.Errorf("%w: to: %v", auth.ErrInvalid, err)
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return from, to, 0, fmt.Errorf("%w: from is not before to", auth.ErrInvalid)
	}
	if resolution, err = ParseResolution(q.Get("resolution"), d.tiers()); err != nil {
		return from, to, 0, fmt.Errorf("%w: resolution: %v", auth.ErrInvalid, err)
	}
	return from, to, resolution, nil
}
