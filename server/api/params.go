package api

import (
	"fmt"
	"strings"
	"time"

	"github.com/latscope/latscope/archive"
)

// ParseTime reads a from/to parameter: RFC 3339, "now", or a negative Go
// duration relative to now ("-1h", "-90m"); empty is no bound.
func ParseTime(s string, now time.Time) (time.Time, error) {
	switch {
	case s == "":
		return time.Time{}, nil
	case s == "now":
		return now, nil
	case strings.HasPrefix(s, "-"):
		d, err := time.ParseDuration(s)
		if err != nil {
			return time.Time{}, fmt.Errorf("%q: want RFC 3339, now or a relative time such as -1h", s)
		}
		return now.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: want RFC 3339 (2026-11-25T03:10:00Z), now or a relative time such as -1h", s)
	}
	return t, nil
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
