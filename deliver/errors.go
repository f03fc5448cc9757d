package deliver

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Kind classifies why a delivery attempt did not get through.
type Kind int8

const (
	// KindRetryable is a network error, 408, 429, 5xx, or any status the
	// permanent rule leaves to retry.
	KindRetryable Kind = iota + 1
	// KindPermanent is a status the inbox will keep refusing.
	KindPermanent
	// KindHeld is a delivery the circuit breaker held back unsent.
	KindHeld
	// KindSkipped is a delivery SkipIf said not to send.
	KindSkipped
	// KindDeadline is a delivery whose batch deadline passed.
	KindDeadline
	// KindExhausted is a delivery that used all its attempts.
	KindExhausted
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindRetryable:
		return "retryable"
	case KindPermanent:
		return "permanent"
	case KindHeld:
		return "held"
	case KindSkipped:
		return "skipped"
	case KindDeadline:
		return "deadline"
	case KindExhausted:
		return "exhausted"
	default:
		return "unknown"
	}
}

// failure says what became of a delivery of kind k, as an error reads.
func (k Kind) failure() string {
	switch k {
	case KindRetryable:
		return "failed"
	case KindPermanent:
		return "refused for good"
	case KindHeld:
		return "held by the circuit breaker"
	case KindSkipped:
		return "skipped"
	case KindDeadline:
		return "given up: batch deadline passed"
	case KindExhausted:
		return "given up: attempts exhausted"
	default:
		return "failed"
	}
}

// Sentinels matching a *DeliveryError of the same Kind with errors.Is.
var (
	ErrRetryable = errors.New("deliver: retryable failure")
	ErrPermanent = errors.New("deliver: permanent failure")
	ErrHeld      = errors.New("deliver: held by the circuit breaker")
	ErrSkipped   = errors.New("deliver: skipped")
	ErrDeadline  = errors.New("deliver: batch deadline passed")
	ErrExhausted = errors.New("deliver: attempts exhausted")
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

// DeliveryError describes a failed, held, skipped or abandoned delivery. Its
// Kind, not its message, says what happened.
type DeliveryError struct {
	// Kind says what happened: match it, or errors.Is with a sentinel.
	Kind Kind
	// Inbox is the destination.
	Inbox string
	// StatusCode is the inbox's HTTP status, or 0 when no response came.
	StatusCode int
	// RetryAfter is what the response's Retry-After asked, or 0.
	RetryAfter time.Duration
	// Until, for a held delivery, is when its breaker may let one through.
	Until time.Time
	// Err is the underlying error (a network or signing error), if any.
	Err error
}

// Error describes the failure. The inbox's response body is never part of
// it: a remote server controls that.
func (e *DeliveryError) Error() string {
	s := "deliver: delivery to " + strconv.Quote(e.Inbox) + " " + e.Kind.failure()
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

// Is matches the sentinel of e's Kind.
func (e *DeliveryError) Is(target error) bool {
	switch target {
	case ErrRetryable:
		return e.Kind == KindRetryable
	case ErrPermanent:
		return e.Kind == KindPermanent
	case ErrHeld:
		return e.Kind == KindHeld
	case ErrSkipped:
		return e.Kind == KindSkipped
	case ErrDeadline:
		return e.Kind == KindDeadline
	case ErrExhausted:
		return e.Kind == KindExhausted
	}
	return false
}

// Retryable reports whether the failure is worth another attempt.
func (e *DeliveryError) Retryable() bool { return e.Kind == KindRetryable || e.Kind == KindHeld }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
}
