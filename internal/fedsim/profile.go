package fedsim

import (
	"net/http"
	"time"
)

// Behaviour is what a host does with a request.
type Behaviour int8

const (
	// Answer answers with the profile's Status after its latency.
	Answer Behaviour = iota
	// Hang reads the request and never answers: the client gives up.
	Hang
	// Refuse closes the connection as soon as the request's headers are read.
	Refuse
)

// Profile says how one host answers.
type Profile struct {
	// Behaviour is what the host does. Defaults to Answer.
	Behaviour Behaviour
	// Latency is how long the host takes to answer, and Jitter the most it
	// adds or takes off at random (uniformly). Default to 0.
	Latency, Jitter time.Duration
	// Status is the answer. Defaults to 202 Accepted.
	Status int
	// FailP is the probability that the host answers 500 instead.
	FailP float64
	// RetryAfter, when set, is sent as the Retry-After header of a non-2xx
	// answer (as seconds).
	RetryAfter time.Duration
	// Check, when set, sees each request that is answered, with its body,
	// before the answer: a non-zero status replaces it, with header's
	// fields added (deliver's tests verify signatures with it, as peers do).
	Check func(r *http.Request, body []byte) (status int, header http.Header)
}

// Healthy answers 202 after latency ± jitter.
func Healthy(latency, jitter time.Duration) Profile {
	return Profile{Latency: latency, Jitter: jitter}
}

// Tarpit accepts a connection, reads the request and never answers.
func Tarpit() Profile { return Profile{Behaviour: Hang} }

// Slow answers 202 after d.
func Slow(d time.Duration) Profile { return Profile{Latency: d} }

// Flaky answers like Healthy, but 500 with probability p.
func Flaky(latency, jitter time.Duration, p float64) Profile {
	return Profile{Latency: latency, Jitter: jitter, FailP: p}
}

// Refusing closes every connection at once, answering nothing.
func Refusing() Profile { return Profile{Behaviour: Refuse} }

// RateLimited answers 429 with Retry-After after latency.
func RateLimited(latency, retryAfter time.Duration) Profile {
	return Profile{Latency: latency, Status: http.StatusTooManyRequests, RetryAfter: retryAfter}
}

// Gone answers 410 Gone after latency.
func Gone(latency time.Duration) Profile {
	return Profile{Latency: latency, Status: http.StatusGone}
}

// Healthy reports whether the profile, apart from chance, delivers: it
// answers a 2xx and never fails on purpose.
func (p Profile) Healthy() bool {
	return p.Behaviour == Answer && p.FailP == 0 && (p.Status == 0 || p.Status >= 200 && p.Status < 300)
}

func (p Profile) status() int {
	if p.Status == 0 {
		return http.StatusAccepted
	}
	return p.Status
}
