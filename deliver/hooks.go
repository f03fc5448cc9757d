package deliver

import (
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/sig"
)

// AttemptOutcome is what became of one attempt.
type AttemptOutcome int8

const (
	// AttemptDelivered: the inbox accepted it.
	AttemptDelivered AttemptOutcome = iota + 1
	// AttemptFailed: it could not be sent, or the inbox answered a network
	// error, 408, 429, 5xx or any status Config.Permanent leaves to retry.
	// The delivery is retried unless its attempts or deadline run out.
	AttemptFailed
	// AttemptRefused: the inbox refused it for good (Config.Permanent, or
	// the client refused to send it). The delivery ends as ResultFailed.
	AttemptRefused
	// AttemptHeld: the circuit breaker held it back unsent; it counts as
	// an attempt and is retried.
	AttemptHeld
)

// String returns "delivered", "failed", "refused" or "held".
func (o AttemptOutcome) String() string {
	switch o {
	case AttemptDelivered:
		return "delivered"
	case AttemptRefused:
		return "refused"
	case AttemptHeld:
		return "held"
	default:
		return "failed"
	}
}

// Attempt describes one attempt, for Config.OnAttempt.
type Attempt struct {
	// Inbox is the destination and Host its host (the breaker's and the
	// limiter's key).
	Inbox, Host string
	// ActivityID is the activity's "id".
	ActivityID string
	// Tag is the batch's tag.
	Tag string
	// Number counts attempts from 1; held ones count.
	Number int
	// Outcome says whether it was delivered, failed, refused or held.
	Outcome AttemptOutcome
	// StatusCode is the final response's status, or 0.
	StatusCode int
	// Duration is the time spent sending, signing included.
	Duration time.Duration
	// Scheme signed the final request; 0 when nothing was sent.
	Scheme sig.Scheme
	// Probe says the breaker let this one through as its probe.
	Probe bool
	// Err is a *DeliveryError, of the same Outcome, unless delivered.
	Err error
}

// Failure describes a permanent refusal, for Config.OnFailure.
type Failure struct {
	// Inbox is the destination that refused and Host its host, which an
	// application may mark unavailable.
	Inbox, Host string
	// ActivityID and ActorID are the activity's "id" and "actor".
	ActivityID string
	ActorID    string
	// Tag is the batch's tag.
	Tag string
	// StatusCode is the refusing status, or 0 when the client refused to
	// send (a blocked address, a redirect).
	StatusCode int
	// Err is the refusal, of Outcome AttemptRefused.
	Err *DeliveryError
}

// Settlement describes a delivery that is done with, for Config.OnSettled.
type Settlement struct {
	// Inbox is the destination and Host its host.
	Inbox, Host string
	// ActivityID is the activity's "id".
	ActivityID string
	// Tag is the batch's tag, for following a batch.
	Tag string
	// Result is how the delivery ended.
	Result driver.Result
	// Attempts counts the attempts made, held ones included.
	Attempts int
	// Err says why it was not delivered; nil when it was. For
	// ResultFailed it is the refusal, a *DeliveryError; for ResultGaveUp
	// it matches ErrDeadline or ErrExhausted and wraps the last attempt's
	// *DeliveryError, if one was made; for ResultSkipped it is ErrSkipped
	// or ErrUnavailable.
	Err error
}
