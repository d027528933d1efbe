package driver

import (
	"context"
	"io"
	"log/slog"
	"sync"

	"github.com/latscope/latscope/audit/correlate"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/server/auditwatch"
	"github.com/latscope/latscope/server/config"
	"github.com/latscope/latscope/view/audittimeline"
)

// openAuditWatches makes the configuration's audit watches runnable: each
// is `latscope audit FILES --follow` whose chains the server keeps.
func openAuditWatches(c *config.Config, logger *slog.Logger) (*auditwatch.Set, error) {
	defs := make([]auditwatch.Watch, 0, len(c.AuditWatches))
	for _, w := range c.AuditWatches {
		defs = append(defs, auditwatch.Watch{Name: w.Name, Files: w.Files, DB: w.DB, Follow: auditFollow(w, logger)})
	}
	return auditwatch.Open(auditwatch.Options{Data: c.Data, Logger: logger}, defs)
}

// auditFollow follows one watch's files from their start; malformed
// records are logged with their file and line.
func auditFollow(w config.AuditWatch, logger *slog.Logger) auditwatch.Follow {
	return func(ctx context.Context, emit func(correlate.Chain) error) error {
		diag := input.NewDiagnostics(&logWriter{logger: logger, job: "audit watch " + w.Name}, input.DefaultReportLimit)
		filter := correlate.Filter{DB: w.DB}
		opts := correlate.FollowOptions{Options: correlate.Options{Year: w.Year}}
		return correlate.Follow(ctx, w.Files, diag, opts, func(c correlate.Chain) error {
			if !filter.Match(c.Subject) {
				return nil
			}
			return emit(c)
		})
	}
}

// auditTimelinePage draws a watch's timeline as `latscope audit -o
// FILE.html` does.
func auditTimelinePage(w io.Writer, title string, chains []correlate.Chain) error {
	return audittimeline.Write(w, audittimeline.Report{Title: title, Chains: chains})
}

// runAuditWatches follows the watches until the returned stop is called,
// which waits for them and closes their files.
func runAuditWatches(ctx context.Context, s *auditwatch.Set) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(ctx) })
	return func() {
		cancel()
		wg.Wait()
		s.Close()
	}
}
