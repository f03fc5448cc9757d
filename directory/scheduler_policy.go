package directory

import (
	"crypto/sha256"
	"encoding/binary"
	"time"
)

// Scheduler timing. These numbers are protocol requirements, not tuning.
const (
	// HeartbeatInterval separates successful lifecycle operations.
	HeartbeatInterval = 24 * time.Hour
	// HeartbeatJitterMax bounds the stable per-relay, per-Directory jitter
	// added to HeartbeatInterval.
	HeartbeatJitterMax = 2 * time.Hour
	// BackoffBase is the first local retry delay after a retryable failure.
	BackoffBase = 30 * time.Second
	// BackoffCap caps the local retry delay (jitter included).
	BackoffCap = 15 * time.Minute
	// RetryAfterCap caps a remote Retry-After lower bound.
	RetryAfterCap = 24 * time.Hour
)

// stableFraction maps (kind, relay, origin, n) to a stable value in [0, 1).
// SHA-256 keeps it uniform and unpredictable to a Directory without being
// random, so replicas and restarts agree.
func stableFraction(kind, relay, origin string, n uint64) float64 {
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write([]byte(relay))
	h.Write([]byte{0})
	h.Write([]byte(origin))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	h.Write(b[:])
	sum := h.Sum(nil)
	return float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53)
}

// HeartbeatJitter is the stable jitter in [0, HeartbeatJitterMax] for one
// relay and one Directory, in whole seconds. Spreading relays over two hours
// keeps a Directory from seeing every relay at the same instant.
func HeartbeatJitter(relay, origin string) time.Duration {
	secs := int64(stableFraction("heartbeat", relay, origin, 0) * float64(HeartbeatJitterMax/time.Second+1))
	return time.Duration(secs) * time.Second
}

// NextHeartbeatAfter is the next normal heartbeat deadline after a success
// completed at done.
func NextHeartbeatAfter(done time.Time, relay, origin string) time.Time {
	return done.Add(HeartbeatInterval + HeartbeatJitter(relay, origin))
}

// RetryBackoff is the local delay after the attempt-th consecutive
// retryable failure (attempt >= 1): BackoffBase doubled per attempt plus a
// deterministic positive jitter of 1 s up to a quarter of the step, capped at
// BackoffCap.
func RetryBackoff(relay, origin string, attempt int) time.Duration {
	attempt = max(attempt, 1)
	step := BackoffCap
	if attempt <= 10 { // 30 s << 5 already exceeds the cap
		step = min(BackoffBase<<(attempt-1), BackoffCap)
	}
	j := time.Second + time.Duration(stableFraction("backoff", relay, origin, uint64(attempt))*float64(step/4))
	return min(step+j, BackoffCap)
}

// RetryDelay combines the local backoff with a remote Retry-After: the
// larger wins, the remote bound capped at RetryAfterCap. Jitter never
// shortens the remote bound because it only ever adds to the local part.
func RetryDelay(relay, origin string, attempt int, retryAfter time.Duration) time.Duration {
	return max(RetryBackoff(relay, origin, attempt), min(max(retryAfter, 0), RetryAfterCap))
}

// ceilSecond rounds t up to a whole second, so persisting a deadline in
// whole seconds never moves it earlier.
func ceilSecond(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	tr := t.Truncate(time.Second)
	if tr.Before(t) {
		tr = tr.Add(time.Second)
	}
	return tr.UTC()
}
