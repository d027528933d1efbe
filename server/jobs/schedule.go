package jobs

import (
	"fmt"
	"strings"
	"time"
)

// Schedule runs a job for Run out of every Every ("30s every 15m"): probes
// load what they measure, so they sample rather than run all the time. The
// zero Schedule runs continuously.
type Schedule struct {
	Run, Every time.Duration
}

// Continuous reports whether the job runs all the time.
func (s Schedule) Continuous() bool { return s.Every == 0 }

// String is the form ParseSchedule reads ("" when continuous).
func (s Schedule) String() string {
	if s.Continuous() {
		return ""
	}
	return s.Run.String() + " every " + s.Every.String()
}

// ParseSchedule reads "RUN every PERIOD" (Go durations, e.g. "30s every
// 15m"); an empty string is continuous.
func ParseSchedule(text string) (Schedule, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return Schedule{}, nil
	}
	run, every, ok := strings.Cut(text, " every ")
	if !ok {
		return Schedule{}, fmt.Errorf("schedule %q: want RUN every PERIOD, e.g. \"30s every 15m\"", text)
	}
	var s Schedule
	var err error
	if s.Run, err = time.ParseDuration(strings.TrimSpace(run)); err != nil {
		return Schedule{}, fmt.Errorf("schedule %q: %w", text, err)
	}
	if s.Every, err = time.ParseDuration(strings.TrimSpace(every)); err != nil {
		return Schedule{}, fmt.Errorf("schedule %q: %w", text, err)
	}
	if s.Run <= 0 || s.Every <= 0 {
		return Schedule{}, fmt.Errorf("schedule %q: durations must be positive", text)
	}
	if s.Run > s.Every {
		return Schedule{}, fmt.Errorf("schedule %q: runs %s, longer than its period %s", text, s.Run, s.Every)
	}
	return s, nil
}

// next is the start of the first run at or after t: runs start on
// multiples of Every (counted from the Unix epoch), so that a restarted
// server keeps the same slots.
func (s Schedule) next(t time.Time) time.Time {
	slot := t.Truncate(s.Every)
	if slot.Before(t) {
		slot = slot.Add(s.Every)
	}
	return slot
}
