// Package fakeclock is a clock that tests set and move by hand, for code
// that takes a Now func (session expiry, rate limits, retention). It
// imports nothing of latscope's, so any package's own tests can use it.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a time that moves only when told; safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// New returns a clock showing t.
func New(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time; pass it where a Now func is taken.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
