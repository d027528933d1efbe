package live

import (
	"context"
	"encoding/json"
	"time"

	"github.com/latscope/latscope/archive"
	"github.com/latscope/latscope/server/httpsec"
	"github.com/latscope/latscope/server/jobs"
)

// Publishing returns a writer that writes each interval to out (the
// archive) and then publishes it: a stream sees only what is archived,
// so that its resume from the archive misses nothing it was not sent.
func Publishing(out jobs.Writer, h *Hub) jobs.Writer { return jobs.Then(out, h.Publish) }

// WatchJobs publishes a "job" event (the job's status, as GET
// /api/v1/jobs shows it) whenever a job's state changes, polling status
// every period until ctx ends.
func (h *Hub) WatchJobs(ctx context.Context, status func() []jobs.Status, every time.Duration) {
	last := map[string]jobs.State{}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, s := range status() {
			if last[s.Name] == s.State {
				continue
			}
			last[s.Name] = s.State
			data, _ := json.Marshal(s)
			h.send(&batch{source: s.Name, events: []*encoded{{series: archive.SeriesInfo{Source: s.Name}, event: httpsec.SSEEvent{Type: TypeJob, Data: data}}}})
		}
	}
}
