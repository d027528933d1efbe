// Package remotewrite sends latscope's intervals to a Prometheus-compatible
// store by remote write 1.0 (Prometheus, Mimir, Thanos, VictoriaMetrics):
// the series of sink/promnative as native histograms, or as classic
// buckets for stores that predate them; batched, sharded by series, every
// batch spooled on disk before it is sent and removed when acknowledged,
// retried with backoff while the store fails.
package remotewrite

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang/snappy"
	"github.com/latscope/latscope/sink/promnative"
	"github.com/latscope/latscope/stream"
)

// Options configure a Sender.
type Options struct {
	// URL is the store's remote-write endpoint
	// (http://HOST:9090/api/v1/write for Prometheus).
	URL string
	// Native sends native histograms; false sends classic buckets
	// (_bucket{le}, _count, _sum), for stores without native histograms.
	Native bool
	// BearerTokenFile, or BasicAuthUser with BasicAuthPasswordFile, give
	// the credentials; files are read at each request, so they can be
	// rotated.
	BearerTokenFile       string
	BasicAuthUser         string
	BasicAuthPasswordFile string
	// CAFile verifies the store's certificate (empty: the system's
	// roots); CertFile and KeyFile authenticate latscope to it.
	CAFile, CertFile, KeyFile string
	// Spool is the spool's directory; SpoolLimits bound it.
	Spool       string
	SpoolLimits SpoolLimits
	// Shards send in parallel (0: 4); a series always goes to the same
	// shard, so its samples arrive in order.
	Shards int
	// BatchSamples caps the samples of one request (0: 2000); a native
	// histogram is one sample, a classic one a sample per bucket plus two.
	BatchSamples int
	// Timeout bounds one request (0: 30 s).
	Timeout time.Duration
	// Retry bounds the backoff (zero: DefaultRetry).
	Retry Retry
	// Mapping names and guards the series.
	Mapping promnative.Options
	Logger  *slog.Logger
}

// Defaults of Options.
const (
	DefaultShards       = 4
	DefaultBatchSamples = 2000
	DefaultTimeout      = 30 * time.Second
)

// Sender maps intervals to series, spools them in batches and sends them.
type Sender struct {
	opts   Options
	log    *slog.Logger
	spool  *Spool
	poster *poster
	retry  Retry

	mu     sync.Mutex // one Write at a time: the mapper's state and the shards' order
	mapper *promnative.Mapper

	stats struct{ sentBatches, sentSamples, sentBytes, retries atomic.Uint64 }
}

// New opens the spool (batches left by an earlier run are sent first)
// and prepares the client; Run sends.
func New(opts Options) (*Sender, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Shards <= 0 {
		opts.Shards = DefaultShards
	}
	if opts.BatchSamples <= 0 {
		opts.BatchSamples = DefaultBatchSamples
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Retry == (Retry{}) {
		opts.Retry = DefaultRetry()
	}
	if !strings.HasPrefix(opts.URL, "http://") && !strings.HasPrefix(opts.URL, "https://") {
		return nil, fmt.Errorf("remote write: url %q: want http:// or https://", opts.URL)
	}
	client, err := httpClient(opts)
	if err != nil {
		return nil, err
	}
	auth := authorizer(opts)
	// Read the credentials once now: a missing file is a start-up error,
	// not an endless retry.
	if err := auth(&http.Request{Header: http.Header{}}); err != nil {
		return nil, err
	}
	spool, err := OpenSpool(opts.Spool, opts.Shards, opts.SpoolLimits, opts.Logger)
	if err != nil {
		return nil, err
	}
	return &Sender{opts: opts, log: opts.Logger, spool: spool, retry: opts.Retry, mapper: promnative.NewMapper(opts.Mapping),
		poster: &poster{url: opts.URL, client: client, auth: auth, timeout: opts.Timeout}}, nil
}

// httpClient trusts CAFile and presents CertFile/KeyFile when given.
func httpClient(opts Options) (*http.Client, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if opts.CAFile != "" {
		pem, err := os.ReadFile(opts.CAFile)
		if err != nil {
			return nil, fmt.Errorf("remote write: ca_file: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("remote write: ca_file %s: no PEM certificate in it", opts.CAFile)
		}
	}
	if (opts.CertFile == "") != (opts.KeyFile == "") {
		return nil, errors.New("remote write: cert_file and key_file go together")
	}
	if opts.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(opts.CertFile, opts.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("remote write: client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	return &http.Client{Transport: tr}, nil
}

// authorizer sets the request's Authorization from the files, read at
// each request.
func authorizer(opts Options) func(*http.Request) error {
	return func(req *http.Request) error {
		switch {
		case opts.BearerTokenFile != "":
			tok, err := readSecret(opts.BearerTokenFile)
			if err != nil {
				return fmt.Errorf("remote write: bearer_token_file: %w", err)
			}
			req.Header.Set("Authorization", "Bearer "+tok)
		case opts.BasicAuthUser != "":
			pw, err := readSecret(opts.BasicAuthPasswordFile)
			if err != nil {
				return fmt.Errorf("remote write: basic_auth password_file: %w", err)
			}
			req.SetBasicAuth(opts.BasicAuthUser, pw)
		}
		return nil
	}
}

// readSecret returns a file's first line.
func readSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimRight(line, "\r"), nil
}

// Run sends the spooled batches until ctx ends; what is not acknowledged
// by then stays in the spool for the next run.
func (s *Sender) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for shard := range s.opts.Shards {
		wg.Go(func() { s.shardLoop(ctx, shard) })
	}
	wg.Wait()
}

// Write maps an interval of job iv.Source to series and spools them in
// batches; Run sends them. Intervals without wall-clock time (Relative)
// are not sent: a store would file them in 1970.
func (s *Sender) Write(_ context.Context, iv stream.Interval) error {
	if iv.Relative {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pending := make([]pendingBatch, s.opts.Shards)
	queue := func(labels []promnative.Label, ts []timeSeries) error {
		shard := shardOf(labels, s.opts.Shards)
		p := &pending[shard]
		p.add(ts)
		if p.samples >= s.opts.BatchSamples {
			return s.flush(shard, p)
		}
		return nil
	}
	for _, sr := range s.mapper.Add(iv.Source, iv) {
		if err := queue(sr.Labels, s.timeSeries(sr)); err != nil {
			return err
		}
	}
	for _, ms := range s.mapper.AddMeans(iv.Source, iv) {
		if err := queue(ms.Labels, meanTimeSeries(ms)); err != nil {
			return err
		}
	}
	for shard := range pending {
		if err := s.flush(shard, &pending[shard]); err != nil {
			return err
		}
	}
	return nil
}

// pendingBatch is a shard's batch being filled.
type pendingBatch struct {
	req     writeRequest
	samples int
}

func (p *pendingBatch) add(ts []timeSeries) {
	for _, t := range ts {
		p.req.Series = append(p.req.Series, t)
		p.samples += len(t.Samples) + len(t.Histograms)
	}
}

// flush spools the batch, encoded and compressed as it is sent.
func (s *Sender) flush(shard int, p *pendingBatch) error {
	if p.samples == 0 {
		return nil
	}
	body := snappy.Encode(nil, p.req.marshal())
	err := s.spool.Append(shard, p.samples, body)
	*p = pendingBatch{}
	return err
}

// shardOf hashes a series' labels: the same series, the same shard.
func shardOf(labels []promnative.Label, shards int) int {
	h := fnv.New64a()
	for _, l := range labels {
		h.Write([]byte(l.Name))
		h.Write([]byte{0xff})
		h.Write([]byte(l.Value))
		h.Write([]byte{0xff})
	}
	return int(h.Sum64() % uint64(shards))
}

// timeSeries is a series on the wire: one native histogram, or the
// classic _bucket, _count and _sum series.
func (s *Sender) timeSeries(sr promnative.Series) []timeSeries {
	ms := sr.Timestamp.UnixMilli()
	if s.opts.Native {
		n := sr.Native
		h := histogram{Count: n.Count, Sum: n.Sum, Schema: n.Schema, ZeroThreshold: n.ZeroThreshold, ZeroCount: n.ZeroCount,
			PositiveDeltas: n.Deltas, Timestamp: ms}
		for _, sp := range n.Spans {
			h.PositiveSpans = append(h.PositiveSpans, span{Offset: sp.Offset, Length: sp.Length})
		}
		return []timeSeries{{Labels: wireLabels(sr.Labels, "", "", ""), Histograms: []histogram{h}}}
	}
	c := sr.Classic
	out := make([]timeSeries, 0, len(c.Bounds)+2)
	for i, le := range c.Bounds {
		out = append(out, timeSeries{Labels: wireLabels(sr.Labels, "_bucket", "le", formatLe(le)),
			Samples: []sample{{Value: float64(c.Cumulative[i]), Timestamp: ms}}})
	}
	out = append(out,
		timeSeries{Labels: wireLabels(sr.Labels, "_count", "", ""), Samples: []sample{{Value: float64(c.Count), Timestamp: ms}}},
		timeSeries{Labels: wireLabels(sr.Labels, "_sum", "", ""), Samples: []sample{{Value: c.Sum, Timestamp: ms}}})
	return out
}

// meanTimeSeries is a mean series on the wire: the counters
// promnative.MeanMetric _sum and _count.
func meanTimeSeries(ms promnative.MeanSeries) []timeSeries {
	ts := ms.Timestamp.UnixMilli()
	out := make([]timeSeries, 0, 2)
	for _, part := range []struct {
		suffix string
		value  float64
	}{{"_sum", ms.Sum}, {"_count", ms.Count}} {
		labels := append([]promnative.Label{{Name: "__name__", Value: promnative.MeanMetric + part.suffix}}, ms.Labels...)
		out = append(out, timeSeries{Labels: wireLabels(labels, "", "", ""), Samples: []sample{{Value: part.value, Timestamp: ts}}})
	}
	return out
}

// wireLabels copies labels with suffix added to the metric name and an
// extra label (le) in its sorted place: receivers want labels sorted.
func wireLabels(labels []promnative.Label, suffix, extraName, extraValue string) []label {
	out := make([]label, 0, len(labels)+1)
	for _, l := range labels {
		if l.Name == "__name__" {
			l.Value += suffix
		}
		out = append(out, label{Name: l.Name, Value: l.Value})
	}
	if extraName != "" {
		out = append(out, label{Name: extraName, Value: extraValue})
		slices.SortFunc(out, func(a, b label) int { return strings.Compare(a.Name, b.Name) })
	}
	return out
}

// formatLe writes a bucket bound as Prometheus does ("+Inf", "0.001").
func formatLe(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Stats is what a Sender did so far.
type Stats struct {
	// SentBytes counts the request bodies acknowledged (snappy-compressed
	// protobuf, as on the wire; HTTP headers not counted).
	SentBatches, SentSamples, SentBytes, Retries uint64
	Dropped                                      DropStats
	PendingBatches                               int
	PendingBytes                                 int64
}

// Stats returns the counts so far.
func (s *Sender) Stats() Stats {
	st := Stats{SentBatches: s.stats.sentBatches.Load(), SentSamples: s.stats.sentSamples.Load(), SentBytes: s.stats.sentBytes.Load(), Retries: s.stats.retries.Load(),
		Dropped: s.spool.Dropped()}
	st.PendingBatches, st.PendingBytes = s.spool.Pending()
	return st
}

func (s *Sender) sent(b *batch) {
	s.stats.sentBatches.Add(1)
	s.stats.sentSamples.Add(uint64(b.samples))
	s.stats.sentBytes.Add(uint64(b.size))
}

// retried logs a failed attempt (the first of a series of failures at
// warning level, the others at debug, so that an outage is one line).
func (s *Sender) retried(err error, wait time.Duration) {
	if s.stats.retries.Add(1) == 1 || wait == s.retry.Min {
		s.log.Warn("remote write: the store failed; retrying with backoff", "error", err.Error(), "next_in", wait.String())
		return
	}
	s.log.Debug("remote write: retrying", "error", err.Error(), "next_in", wait.String())
}
