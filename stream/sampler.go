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
	// counted in the same time, where it counts them (nil: unknown). It
	// compares like with like: where the database counts something else
	// than events (MySQL counts table I/O in rows, and one event can fetch
	// a batch of rows), each event seen weighs what the database counted
	// for it. Captures breaks it down.
	CaptureRatio *float64 `json:"capture_ratio,omitempty"`
	// Missed is what the database counted but the sampler did not see, in
	// the database's units (events, or rows for batched table I/O): ring
	// overruns between polls, or events that never reach the history.
	Missed int64 `json:"missed,omitempty"`
	// Captures is the capture per kind of event, each in the unit the
	// database counts it in; the statements' is not part of CaptureRatio.
	Captures []Capture `json:"captures,omitempty"`
	// Rings are the database's ring buffers the sampler reads, with the
	// polls that found one overrun (events lost).
	Rings []Ring `json:"rings,omitempty"`
	// Advice names what limited the capture, or what the figures mean,
	// and what to do.
	Advice []string `json:"advice,omitempty"`
	// CPUSeconds is the sampler's own client-side CPU time (--stats).
	CPUSeconds float64 `json:"cpu_s,omitempty"`
}

// Capture is what a sampler saw of one kind of event against the
// database's own count over the same windows.
type Capture struct {
	// What names the events: "waits", "table I/O", "statements".
	What string `json:"what"`
	// Unit is what the database counts: "events", or "rows" (table I/O).
	Unit string `json:"unit"`
	// Seen and Counted are in Unit; Ratio is Seen over Counted (nil when
	// nothing was counted).
	Seen    int64    `json:"seen"`
	Counted int64    `json:"counted"`
	Ratio   *float64 `json:"ratio,omitempty"`
	// Events is the events seen when Unit is not "events" (the table I/O
	// events that fetched the Seen rows).
	Events int64 `json:"events,omitempty"`
	// Windows is the windows compared; LeftOut those in which the
	// database's count could not be used (it went back: a dropped table
	// takes its counts out of the summary).
	Windows int `json:"windows"`
	LeftOut int `json:"windows_left_out,omitempty"`
}

// Ring is one of the database's ring buffers as a sampler read it.
type Ring struct {
	// Table names it ("events_waits_history_long"); Size is its rows.
	Table string `json:"table"`
	Size  int    `json:"size"`
	// Polls read it; Rows is the new rows they found, IdleRows those that
	// were idle waits (which fill the ring without being latencies).
	Polls    int64 `json:"polls"`
	Rows     int64 `json:"rows"`
	IdleRows int64 `json:"idle_rows,omitempty"`
	// Overruns counts the polls that found the ring full of rows none of
	// which the previous poll had seen: it wrapped in between and events
	// were lost.
	Overruns int64 `json:"overruns"`
}

// Sampler is implemented by sources that sample a live database; reports
// include its SamplerStats.
type Sampler interface {
	SamplerStats() SamplerStats
}
