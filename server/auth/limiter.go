package auth

import (
	"net/netip"
	"sync"
	"time"
)

// LimitPolicy is a token bucket: Burst attempts at once, then one more every
// Refill. Every login attempt takes one token, right or wrong.
type LimitPolicy struct {
	Burst  float64
	Refill time.Duration
}

// LoginLimits are the login rate limits, per user name and per client
// address, and how many keys each remembers at most (bounded memory).
type LoginLimits struct {
	PerUser    LimitPolicy
	PerAddress LimitPolicy
	MaxKeys    int
}

// DefaultLoginLimits allow 5 quick attempts per user then one per 30 s
// (120 guesses an hour), 20 per address then one per 5 s, remembering
// 10 000 users and 10 000 addresses.
func DefaultLoginLimits() LoginLimits {
	return LoginLimits{
		PerUser:    LimitPolicy{Burst: 5, Refill: 30 * time.Second},
		PerAddress: LimitPolicy{Burst: 20, Refill: 5 * time.Second},
		MaxKeys:    10000,
	}
}

type bucket struct {
	tokens float64
	at     time.Time
}

// limiter holds token buckets for at most maxKeys keys. A full bucket is the
// same as no bucket, so those are dropped first; when every remembered key
// is still being limited the limiter refuses new keys (fails closed) rather
// than forgetting a limited one.
type limiter struct {
	mu      sync.Mutex
	policy  LimitPolicy
	maxKeys int
	buckets map[string]*bucket
}

func newLimiter(p LimitPolicy, maxKeys int) *limiter {
	return &limiter{policy: p, maxKeys: maxKeys, buckets: make(map[string]*bucket)}
}

// take spends one attempt for key; when none is left it returns false and
// how long until the next one.
func (l *limiter) take(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.maxKeys {
			l.pruneFull(now)
		}
		if len(l.buckets) >= l.maxKeys {
			return false, l.policy.Refill
		}
		b = &bucket{tokens: l.policy.Burst, at: now}
		l.buckets[key] = b
	}
	l.refill(b, now)
	if b.tokens < 1 {
		wait := time.Duration((1 - b.tokens) * float64(l.policy.Refill))
		return false, wait
	}
	b.tokens--
	return true, 0
}

func (l *limiter) refill(b *bucket, now time.Time) {
	if elapsed := now.Sub(b.at); elapsed > 0 && l.policy.Refill > 0 {
		b.tokens += float64(elapsed) / float64(l.policy.Refill)
		if b.tokens > l.policy.Burst {
			b.tokens = l.policy.Burst
		}
	}
	b.at = now
}

func (l *limiter) pruneFull(now time.Time) {
	for k, b := range l.buckets {
		l.refill(b, now)
		if b.tokens >= l.policy.Burst {
			delete(l.buckets, k)
		}
	}
}

func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// addressKey limits IPv6 clients per /64, the block one host usually has,
// so that an attacker cannot rotate through its own addresses.
func addressKey(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	if ip.Is6() && !ip.Is4In6() {
		p, err := ip.Prefix(64)
		if err == nil {
			return p.String()
		}
	}
	return ip.Unmap().String()
}
