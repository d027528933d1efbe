package input

import (
	"context"
	"io"
	"os"
	"time"
)

// Follower reads a growing file like tail -F: at its end it waits for more
// data; when the file shrinks (truncated in place: copytruncate) it starts
// again from the top, and when the path names a new file (rotated by
// rename, then created again) it switches to that file once the old one
// is read to its end. It returns io.EOF once its context is done.
type Follower struct {
	ctx  context.Context
	path string
	f    *os.File
	poll time.Duration
	off  int64
	idle []idleHook
}

// idleHook is called once each time the follower has waited after long
// without data.
type idleHook struct {
	after time.Duration
	fn    func() error
}

// IdleNotifier is a reader that may wait for data (a followed file): it
// calls fn each time it has waited d without any (once per wait), from
// the goroutine that reads, before it blocks further. A reader that joins
// lines into records uses it to hand on what it holds.
type IdleNotifier interface {
	NotifyIdle(d time.Duration, fn func() error)
}

// Follow follows the file at path, polling every poll for data and
// rotation; f is the file already open there (read from its offset).
func Follow(ctx context.Context, path string, f *os.File, poll time.Duration) *Follower {
	off, _ := f.Seek(0, io.SeekCurrent)
	return &Follower{ctx: ctx, path: path, f: f, poll: poll, off: off}
}

// SetContext replaces the context that ends the following.
func (r *Follower) SetContext(ctx context.Context) { r.ctx = ctx }

// NotifyIdle implements IdleNotifier.
func (r *Follower) NotifyIdle(d time.Duration, fn func() error) {
	r.idle = append(r.idle, idleHook{d, fn})
}

func (r *Follower) Read(p []byte) (int, error) {
	var waited time.Duration
	fired := make([]bool, len(r.idle))
	for {
		n, err := r.f.Read(p)
		r.off += int64(n)
		if n > 0 {
			return n, nil
		}
		if err != nil && err != io.EOF {
			return 0, err
		}
		if r.rotated() {
			continue
		}
		for i, h := range r.idle {
			if !fired[i] && waited >= h.after {
				fired[i] = true
				if err := h.fn(); err != nil {
					return 0, err
				}
			}
		}
		select {
		case <-r.ctx.Done():
			return 0, io.EOF
		case <-time.After(r.poll):
			waited += r.poll
		}
	}
}

// rotated switches to the start of the file when it was truncated or
// replaced; it reports whether reading should be retried at once.
func (r *Follower) rotated() bool {
	cur, err := r.f.Stat()
	if err != nil {
		return false
	}
	if named, err := os.Stat(r.path); err == nil && !os.SameFile(cur, named) {
		if nf, err := os.Open(r.path); err == nil {
			r.f.Close()
			r.f, r.off = nf, 0
			return true
		}
	}
	if cur.Size() < r.off {
		if _, err := r.f.Seek(0, io.SeekStart); err == nil {
			r.off = 0
			return true
		}
	}
	return false
}

// Close closes the file currently followed.
func (r *Follower) Close() error { return r.f.Close() }

// WaitForData blocks until a followed file has some content or ctx is done.
func WaitForData(ctx context.Context, f *os.File, poll time.Duration) error {
	for {
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if st.Size() > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(poll):
		}
	}
}
