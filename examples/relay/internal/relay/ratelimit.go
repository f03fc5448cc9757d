package relay

import (
	"math"
	"sync"
	"time"
)

// Rate limit defaults.
const (
	// RatePerMinuteDefault is the activities a minute one server may send
	// the inbox, sustained: ten a second, more than the public posts of
	// the largest servers seen subscribing to relays.
	RatePerMinuteDefault = 600
	// RateBurstDefault is how many it may send at once above that.
	RateBurstDefault = 120
	// limiterMaxHosts bounds the servers the limiter keeps.
	limiterMaxHosts = 10_000
)

// limiter is a token bucket per server: each server may send burst
// activities at once and perMinute a minute after that, so one noisy or
// hostile subscriber cannot flood every other one through the relay.
type limiter struct {
	perSecond, burst float64
	maxHosts         int
	now              func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newLimiter(perMinute, burst, maxHosts int, now func() time.Time) *limiter {
	return &limiter{perSecond: float64(perMinute) / 60, burst: float64(burst), maxHosts: maxHosts, now: now,
		buckets: map[string]*bucket{}}
}

// allow takes a token for host, or reports how long until there is one.
func (l *limiter) allow(host string) (bool, time.Duration) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[host]
	if b == nil {
		if len(l.buckets) >= l.maxHosts {
			l.pruneLocked(now)
		}
		b = &bucket{tokens: l.burst, at: now}
		l.buckets[host] = b
	}
	if el := now.Sub(b.at); el > 0 {
		b.tokens = math.Min(l.burst, b.tokens+el.Seconds()*l.perSecond)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.perSecond * float64(time.Second))
}

// pruneLocked forgets the servers whose bucket has refilled (forgetting
// them changes nothing), and everyone if that is not enough: crude, but
// bounded, and it only ever lets a server send more.
func (l *limiter) pruneLocked(now time.Time) {
	for h, b := range l.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*l.perSecond >= l.burst {
			delete(l.buckets, h)
		}
	}
	if len(l.buckets) >= l.maxHosts {
		clear(l.buckets)
	}
}

func (l *limiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// retryAfter is d in whole seconds, rounded up, at least 1.
func retryAfter(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}
