package deliver

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The default retry schedule: 30 s doubling to 1 h, 12 attempts in all, so a
// delivery is given up about 5 h 4 min (18,210 s of waiting) after it was
// first tried.
const (
	RetryBaseDefault     = 30 * time.Second
	RetryMaxDelayDefault = time.Hour
	RetryAttemptsDefault = 12
)

// RetryPolicy says how long to wait after a failed attempt, and when to stop.
// The zero value is the default exponential schedule.
type RetryPolicy struct {
	next func(failed int) (time.Duration, bool)
}

// ExponentialRetry waits base after the first failure, doubling after each
// further one up to maxDelay, for attempts attempts in all.
func ExponentialRetry(base, maxDelay time.Duration, attempts int) RetryPolicy {
	return RetryPolicy{next: func(failed int) (time.Duration, bool) {
		if failed >= attempts {
			return 0, false
		}
		shift := min(failed-1, 62)
		if base > maxDelay>>shift {
			return maxDelay, true
		}
		return min(base<<shift, maxDelay), true
	}}
}

// CustomRetry takes a schedule as a function of how many attempts have
// failed (1 after the first): the wait before the next attempt, and false to
// give up.
func CustomRetry(next func(failed int) (time.Duration, bool)) RetryPolicy {
	return RetryPolicy{next: next}
}

// MastodonRetry is Mastodon's delivery schedule: Sidekiq's 16 retries (17
// attempts), waiting (n⁴+15) + rand(0.5·n⁴) + rand(10)·(n+1) seconds after
// retry n (counted from 0), giving up after 2 to 3 days.
func MastodonRetry() RetryPolicy {
	return RetryPolicy{next: func(failed int) (time.Duration, bool) {
		if failed >= 17 {
			return 0, false
		}
		n := float64(failed - 1)
		n4 := math.Pow(n, 4)
		s := n4 + 15 + rand.Float64()*0.5*n4 + float64(rand.IntN(10))*(n+1)
		return time.Duration(s * float64(time.Second)), true
	}}
}

// Next returns the wait after failed attempts have failed, and false when the
// policy gives up.
func (p RetryPolicy) Next(failed int) (time.Duration, bool) {
	if failed < 1 {
		failed = 1
	}
	if p.next == nil {
		return ExponentialRetry(RetryBaseDefault, RetryMaxDelayDefault, RetryAttemptsDefault).next(failed)
	}
	return p.next(failed)
}

// DefaultPermanent is the default permanent-status rule: every 4xx but 408
// and 429.
func DefaultPermanent(status int) bool {
	return status >= 400 && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests
}

// MastodonPermanent is Mastodon's rule: 501, and every 4xx but 401, 408 and
// 429. Pair it with PermanentIfSenderGone: []int{401}, as Mastodon gives up
// on a 401 to a deleted or suspended sender's delivery.
func MastodonPermanent(status int) bool {
	return status == http.StatusNotImplemented || (DefaultPermanent(status) && status != http.StatusUnauthorized)
}

// ParseRetryAfter reads a Retry-After value, delta-seconds or an HTTP date,
// as a wait from now. It returns false for a value it cannot read; a date in
// the past is a wait of 0.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			if len(v) > 18 && strings.Trim(v, "0123456789") == "" {
				return time.Duration(math.MaxInt64), true
			}
			return 0, false
		}
		if n > int64(math.MaxInt64/time.Second) {
			return time.Duration(math.MaxInt64), true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}
