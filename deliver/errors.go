package deliver

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Errors returned by Send and SendBatch.
var (
	// ErrNoInboxes is returned for a send with no valid inbox.
	ErrNoInboxes = errors.New("deliver: no inboxes")
	// ErrNotJSON is returned for an activity that is not a JSON object.
	ErrNotJSON = errors.New("deliver: activity is not a JSON object")
	// ErrInvalidConfig is wrapped by New for a Config it cannot use.
	ErrInvalidConfig = errors.New("deliver: invalid config")
)

// Why a delivery ended undelivered without an inbox's refusal: the
// Settlement.Err of ResultGaveUp and ResultSkipped. A delivery given up
// after attempts wraps the last attempt's *DeliveryError too.
var (
	// ErrDeadline: the batch deadline passed (ResultGaveUp).
	ErrDeadline = errors.New("deliver: batch deadline passed")
	// ErrExhausted: the retry policy or Batch.MaxAttempts allowed no more
	// attempts (ResultGaveUp).
	ErrExhausted = errors.New("deliver: attempts exhausted")
	// ErrSkipped: Config.SkipIf said not to send it (ResultSkipped).
	ErrSkipped = errors.New("deliver: skipped by SkipIf")
	// ErrUnavailable: its host is unavailable, by the availability rule
	// (ResultSkipped).
	ErrUnavailable = errors.New("deliver: host unavailable")
)

// DeliveryError describes an attempt that did not deliver: an Attempt's
// Err, a Failure's, and the Settlement.Err of a delivery that ended on one.
// Match Attempt.Outcome and Settlement.Result for what happened, and read
// the fields with errors.As for the details.
type DeliveryError struct {
	// Outcome is the attempt's: AttemptFailed, AttemptRefused or
	// AttemptHeld.
	Outcome AttemptOutcome
	// Inbox is the destination.
	Inbox string
	// StatusCode is the inbox's HTTP status, or 0 when no response came.
	StatusCode int
	// RetryAfter is what the response's Retry-After asked, or 0.
	RetryAfter time.Duration
	// Until, for a held attempt, is when its breaker may let one through.
	Until time.Time
	// Err is the underlying error (a network or signing error), if any.
	Err error
}

// Error describes the failure. The inbox's response body is never part of
// it: a remote server controls that.
func (e *DeliveryError) Error() string {
	s := "deliver: delivery to " + strconv.Quote(e.Inbox) + " "
	switch e.Outcome {
	case AttemptRefused:
		s += "refused for good"
	case AttemptHeld:
		s += "held by the circuit breaker"
	default:
		s += "failed"
	}
	if e.StatusCode != 0 {
		s += ": status " + strconv.Itoa(e.StatusCode)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *DeliveryError) Unwrap() error { return e.Err }

// gaveUp is the Settlement.Err of a delivery given up for reason
// (ErrDeadline, ErrExhausted) after last, its last attempt's error.
func gaveUp(reason error, last *DeliveryError) error {
	if last == nil {
		return reason
	}
	return fmt.Errorf("%w: %w", reason, last)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}
