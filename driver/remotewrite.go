package driver

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/latscope/latscope/server/config"
	"github.com/latscope/latscope/server/jobs"
	"github.com/latscope/latscope/sink/promnative"
	"github.com/latscope/latscope/sink/remotewrite"
	"github.com/latscope/latscope/stream"
)

// RemoteWriteDir holds the remote-write spools, one directory per target.
const RemoteWriteDir = "remotewrite"

// remoteWrites are serve's remote-write senders: every archived interval
// is spooled for each, and each sends on its own.
type remoteWrites struct {
	senders []*remotewrite.Sender
	names   []string
	log     *slog.Logger
}

// openRemoteWrites opens a sender per remote_write target, its spool in
// DATA/remotewrite/NAME (batches left by the last run are sent first),
// each mapping intervals as GET /metrics does (its own cumulative state).
func openRemoteWrites(c *config.Config, mapping promnative.Options, logger *slog.Logger) (*remoteWrites, error) {
	rw := &remoteWrites{log: logger}
	for _, t := range c.RemoteWrite {
		opts := remotewrite.Options{URL: t.URL, Native: t.IsNative, BearerTokenFile: t.BearerTokenFile,
			CAFile: t.TLS.CAFile, CertFile: t.TLS.CertFile, KeyFile: t.TLS.KeyFile,
			Spool: filepath.Join(c.Data, RemoteWriteDir, t.Name), SpoolLimits: remotewrite.SpoolLimits{MaxBytes: t.SpoolBytes, MaxAge: t.SpoolAge},
			Shards: t.Shards, BatchSamples: t.Batch, Mapping: mapping,
			Logger: logger.With("remote_write", t.Name)}
		if b := t.BasicAuth; b != nil {
			opts.BasicAuthUser, opts.BasicAuthPasswordFile = b.Username, b.PasswordFile
		}
		s, err := remotewrite.New(opts)
		if err != nil {
			return nil, err
		}
		rw.senders, rw.names = append(rw.senders, s), append(rw.names, t.Name)
	}
	return rw, nil
}

// writer hands every interval out writes to the senders too. A spooling
// failure (a full disk) is logged: the archive has the interval.
func (rw *remoteWrites) writer(out jobs.Writer) jobs.Writer {
	if len(rw.senders) == 0 {
		return out
	}
	return jobs.Then(out, rw.spool)
}

// spool hands an archived interval to every sender.
func (rw *remoteWrites) spool(ctx context.Context, iv stream.Interval) {
	for i, s := range rw.senders {
		if err := s.Write(ctx, iv); err != nil {
			rw.log.Warn("remote write: spooling an interval", "remote_write", rw.names[i], "job", iv.Source, "error", err.Error())
		}
	}
}

// run starts the senders; the returned function stops them (what they
// have not sent stays spooled for the next start) and waits.
func (rw *remoteWrites) run(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	for _, s := range rw.senders {
		wg.Go(func() { s.Run(ctx) })
	}
	return func() {
		cancel()
		wg.Wait()
		for i, s := range rw.senders {
			st := s.Stats()
			rw.log.Info("remote write stopped", "remote_write", rw.names[i], "sent_samples", st.SentSamples, "sent_bytes", st.SentBytes, "dropped_samples", st.Dropped.Samples, "spooled_batches", st.PendingBatches)
		}
	}
}
