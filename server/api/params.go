package api

import (
	"fmt"
	"strings"
	"time"

	"github.com/latscope/latscope/archive"
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
