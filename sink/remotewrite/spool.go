package remotewrite

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// SpoolLimits bound the spool: beyond either, the oldest batches are
// dropped (counted and warned about).
type SpoolLimits struct {
	// MaxBytes caps the spool's files (0: no cap).
	MaxBytes int64
	// MaxAge drops batches made longer ago than this (0: kept until sent).
	MaxAge time.Duration
}

// Spool keeps every batch on disk, one file each, from before it is sent
// until the store acknowledges it, so that an outage or a restart loses
// nothing within its limits. Each shard's batches are sent in order.
type Spool struct {
	dir    string
	limits SpoolLimits
	log    *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	queues  [][]*batch // per shard, oldest first
	wake    []chan struct{}
	bytes   int64
	nextSeq uint64
	dropped DropStats
}

// DropStats counts what the spool gave up.
type DropStats struct {
	Batches, Samples uint64
}

// batch is one request's body in the spool.
type batch struct {
	seq      uint64
	shard    int
	created  time.Time
	samples  int
	size     int64
	path     string
	inFlight bool
}

const spoolSuffix = ".rw"

// fileName holds a batch's facts, so that reopening reads no file:
// sequence (the order of sending), shard, creation (for MaxAge) and
// sample count (for the drop counts).
func (b *batch) fileName() string {
	return fmt.Sprintf("%016d-%03d-%d-%d%s", b.seq, b.shard, b.created.UnixMilli(), b.samples, spoolSuffix)
}

func parseBatchName(name string) (*batch, bool) {
	var b batch
	var ms int64
	base, ok := strings.CutSuffix(name, spoolSuffix)
	if !ok {
		return nil, false
	}
	if n, err := fmt.Sscanf(base, "%d-%d-%d-%d", &b.seq, &b.shard, &ms, &b.samples); n != 4 || err != nil || b.shard < 0 || b.samples < 0 {
		return nil, false
	}
	b.created = time.UnixMilli(ms)
	return &b, true
}

// OpenSpool opens (creating it) the spool directory with its batches left
// by an earlier run, queued to be sent again first. A batch spooled by a
// run with more shards goes to shard (its shard mod shards).
func OpenSpool(dir string, shards int, limits SpoolLimits, log *slog.Logger) (*Spool, error) {
	if shards < 1 {
		return nil, fmt.Errorf("spool: %d shards: want at least 1", shards)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	s := &Spool{dir: dir, limits: limits, log: log, now: time.Now, queues: make([][]*batch, shards), wake: make([]chan struct{}, shards)}
	for i := range s.wake {
		s.wake[i] = make(chan struct{}, 1)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	var found []*batch
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if strings.HasSuffix(e.Name(), ".tmp") { // a write cut short: never acknowledged, never complete
			_ = os.Remove(path)
			continue
		}
		b, ok := parseBatchName(e.Name())
		if !ok || !e.Type().IsRegular() {
			log.Warn("remote write spool: ignoring a file that is not a batch", "file", path)
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("spool: %w", err)
		}
		b.path, b.size = path, info.Size()
		b.shard %= shards
		found = append(found, b)
	}
	slices.SortFunc(found, func(a, b *batch) int { return cmp.Compare(a.seq, b.seq) })
	for _, b := range found {
		s.queues[b.shard] = append(s.queues[b.shard], b)
		s.bytes += b.size
		s.nextSeq = b.seq + 1
	}
	if len(found) > 0 {
		log.Info("remote write spool: resending batches left by the last run", "batches", len(found), "bytes", s.bytes, "dir", dir)
	}
	s.mu.Lock()
	s.enforceLocked()
	s.mu.Unlock()
	return s, nil
}

// Append writes a batch for shard (its body as it will be sent) and
// queues it. The file is complete (written, synced, renamed) before it
// is queued, so a crash leaves either the whole batch or none.
func (s *Spool) Append(shard, samples int, body []byte) error {
	s.mu.Lock()
	b := &batch{seq: s.nextSeq, shard: shard, created: s.now(), samples: samples, size: int64(len(body))}
	s.nextSeq++
	s.mu.Unlock()
	b.path = filepath.Join(s.dir, b.fileName())
	if err := writeFileSynced(b.path, body); err != nil {
		return fmt.Errorf("remote write spool: %w", err)
	}
	s.mu.Lock()
	// Batches are appended in sequence order per shard by the one writer
	// of a shard; a later seq never overtakes an earlier one.
	s.queues[shard] = append(s.queues[shard], b)
	s.bytes += b.size
	s.enforceLocked()
	s.mu.Unlock()
	s.signal(shard)
	return nil
}

func writeFileSynced(path string, body []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}

func (s *Spool) signal(shard int) {
	select {
	case s.wake[shard] <- struct{}{}:
	default:
	}
}

// Next waits for the oldest batch of shard and returns it with its body;
// the batch stays in the spool until Done or Drop.
func (s *Spool) Next(ctx context.Context, shard int) (*batch, []byte, error) {
	for {
		s.mu.Lock()
		s.enforceLocked()
		var head *batch
		if q := s.queues[shard]; len(q) > 0 {
			head = q[0]
			head.inFlight = true
		}
		s.mu.Unlock()
		if head != nil {
			body, err := os.ReadFile(head.path)
			if err == nil {
				return head, body, nil
			}
			s.Drop(head, fmt.Sprintf("unreadable: %v", err))
			continue
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-s.wake[shard]:
		}
	}
}

// Done removes an acknowledged batch.
func (s *Spool) Done(b *batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unqueueLocked(b) {
		s.bytes -= b.size
		if err := os.Remove(b.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("remote write spool: removing a sent batch", "error", err.Error())
		}
	}
}

// Drop removes a batch that will not be sent, counted and warned about.
func (s *Spool) Drop(b *batch, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unqueueLocked(b) {
		s.dropLocked([]*batch{b}, why)
	}
}

// unqueueLocked takes b out of its queue; false when it was already
// gone (dropped by the caps).
func (s *Spool) unqueueLocked(b *batch) bool {
	q := s.queues[b.shard]
	i := slices.Index(q, b)
	if i < 0 {
		return false
	}
	s.queues[b.shard] = slices.Delete(q, i, i+1)
	return true
}

// Expired reports whether a batch is older than MaxAge: its retries end.
func (s *Spool) Expired(b *batch) bool {
	return s.limits.MaxAge > 0 && s.now().Sub(b.created) > s.limits.MaxAge
}

// Dropped returns what the spool dropped so far.
func (s *Spool) Dropped() DropStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Pending returns the batches and bytes waiting in the spool.
func (s *Spool) Pending() (batches int, bytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range s.queues {
		batches += len(q)
	}
	return batches, s.bytes
}

// enforceLocked drops batches older than MaxAge, then the oldest until
// the spool fits MaxBytes. Batches being sent are left to their sender,
// which stops retrying an expired one.
func (s *Spool) enforceLocked() {
	var victims []*batch
	if s.limits.MaxAge > 0 {
		cutoff := s.now().Add(-s.limits.MaxAge)
		for shard, q := range s.queues {
			s.queues[shard] = slices.DeleteFunc(q, func(b *batch) bool {
				old := !b.inFlight && b.created.Before(cutoff)
				if old {
					victims = append(victims, b)
				}
				return old
			})
		}
		s.dropLocked(victims, "older than max_age")
	}
	for s.limits.MaxBytes > 0 && s.bytes > s.limits.MaxBytes {
		oldest := s.oldestIdleLocked()
		if oldest == nil {
			return
		}
		s.unqueueLocked(oldest)
		s.dropLocked([]*batch{oldest}, "spool over max_spool")
	}
}

// dropLocked removes batches already taken out of their queues.
func (s *Spool) dropLocked(victims []*batch, why string) {
	for _, b := range victims {
		s.bytes -= b.size
		_ = os.Remove(b.path)
		s.dropped.Batches++
		s.dropped.Samples += uint64(b.samples)
		s.log.Warn("remote write: dropped a batch", "why", why, "samples", b.samples, "made", b.created.UTC().Format(time.RFC3339),
			"dropped_batches", s.dropped.Batches, "dropped_samples", s.dropped.Samples)
	}
}

// oldestIdleLocked is the batch of lowest sequence not being sent.
func (s *Spool) oldestIdleLocked() *batch {
	var oldest *batch
	for _, q := range s.queues {
		for _, b := range q {
			if !b.inFlight && (oldest == nil || b.seq < oldest.seq) {
				oldest = b
			}
		}
	}
	return oldest
}
