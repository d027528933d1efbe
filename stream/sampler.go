package stream

// SamplerStats describes a sampling source for reports (the report JSON's
// "source" object).
type SamplerStats struct {
	// Kind names the technique, e.g. "mysql events_waits_history_long
	// sampler" or "postgres pg_stat_activity sampler".
	Kind string `json:"kind"`
	// PollsPerSecond is the achieved polling rate.
	PollsPerSecond float64 `json:"polls_per_s"`
	// CaptureRatio is the events seen over the events the database
	// counted in the same time, where it counts them (nil: unknown).
	CaptureRatio *float64 `json:"capture_ratio,omitempty"`
	// Missed estimates events lost between polls (ring buffers overrun).
	Missed int64 `json:"missed,omitempty"`
	// CPUSeconds is the sampler's own client-side CPU time (--stats).
	CPUSeconds float64 `json:"cpu_s,omitempty"`
}

// Sampler is implemented by sources that sample a live database; reports
// include its SamplerStats.
type Sampler interface {
	SamplerStats() SamplerStats
}
