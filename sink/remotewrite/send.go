package remotewrite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Retry bounds the backoff between attempts of one batch: Min after the
// first failure, doubling, at most Max.
type Retry struct {
	Min, Max time.Duration
}

// DefaultRetry waits 500 ms, then doubles up to 30 s, Prometheus's own
// remote-write backoff bounds.
func DefaultRetry() Retry { return Retry{Min: 500 * time.Millisecond, Max: 30 * time.Second} }

// next doubles d within the bounds.
func (r Retry) next(d time.Duration) time.Duration {
	if d < r.Min {
		return r.Min
	}
	return min(2*d, r.Max)
}

// permanentError is a refusal that resending the same batch cannot
// change (a 4xx other than 429): the batch is dropped, with the store's
// message logged.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// poster sends request bodies to one remote-write endpoint.
type poster struct {
	url     string
	client  *http.Client
	auth    func(*http.Request) error
	timeout time.Duration
}

// post sends one snappy-compressed WriteRequest. 2xx is success; 5xx,
// 429 and network errors are worth a retry; other statuses are permanent.
func (p *poster) post(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return permanentError{err}
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	req.Header.Set("User-Agent", "latscope")
	if err := p.auth(req); err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	err = fmt.Errorf("%s: %s: %s", p.url, resp.Status, bytes.TrimSpace(msg))
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode/100 == 5 {
		if after := retryAfter(resp.Header.Get("Retry-After"), time.Now()); after > 0 {
			return retryAfterError{err, after}
		}
		return err
	}
	return permanentError{err}
}

// retryAfterError is a refusal that said when to come back (429 or 503
// with Retry-After, as Mimir's and Thanos' rate limits answer).
type retryAfterError struct {
	err   error
	after time.Duration
}

func (e retryAfterError) Error() string { return e.err.Error() }
func (e retryAfterError) Unwrap() error { return e.err }

// retryAfter reads Retry-After: seconds or an HTTP date (0: absent or
// unreadable).
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return at.Sub(now)
	}
	return 0
}

// shardLoop sends shard's batches from the spool in order until ctx
// ends: a batch is retried with backoff until acknowledged, refused for
// good, or older than the spool's MaxAge.
func (s *Sender) shardLoop(ctx context.Context, shard int) {
	for {
		b, body, err := s.spool.Next(ctx, shard)
		if err != nil {
			return
		}
		var wait time.Duration
		for {
			err := s.poster.post(ctx, body)
			if err == nil {
				s.spool.Done(b)
				s.sent(b)
				break
			}
			if ctx.Err() != nil {
				return // the batch stays spooled for the next run
			}
			var perm permanentError
			if errors.As(err, &perm) {
				s.spool.Drop(b, "refused by the store: "+err.Error())
				break
			}
			if s.spool.Expired(b) {
				s.spool.Drop(b, "older than max_age while the store failed: "+err.Error())
				break
			}
			wait = s.retry.next(wait)
			// A store that says when to come back is believed, within
			// the backoff's cap: waiting longer would only grow the spool.
			var ra retryAfterError
			if errors.As(err, &ra) {
				wait = min(max(wait, ra.after), s.retry.Max)
			}
			s.retried(err, wait)
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}
}
