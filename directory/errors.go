package directory

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Sentinel errors. Returned errors wrap one of these; decide what to do with
// ClassOf or errors.Is, never by matching strings.
var (
	// ErrConfig is returned for invalid Directory configuration.
	ErrConfig = errors.New("directory: invalid configuration")
	// ErrInvalidOrigin is returned for a Directory origin that is not one
	// canonical HTTPS origin.
	ErrInvalidOrigin = errors.New("directory: invalid directory origin")
	// ErrInvalidProfile is returned by strict profile normalisation.
	ErrInvalidProfile = errors.New("directory: invalid profile")
	// ErrInvalidState is returned for an unknown local state name.
	ErrInvalidState = errors.New("directory: invalid local state")
	// ErrUnknownDirectory is returned for an origin that is not configured.
	ErrUnknownDirectory = errors.New("directory: directory not configured")
	// ErrDisabled is returned when register, heartbeat or sync is asked of
	// a disabled entry: a disabled entry sends no lifecycle traffic.
	ErrDisabled = errors.New("directory: directory entry is disabled")
	// ErrUnsupportedVersion is returned when a call names a protocol version
	// this package does not implement or the Directory does not advertise.
	ErrUnsupportedVersion = errors.New("directory: unsupported protocol version")
	// ErrRejected is wrapped by every *ResponseError: the Directory answered
	// with a valid error envelope.
	ErrRejected = errors.New("directory: request rejected")
	// ErrInvalidResponse is wrapped by every *InvalidResponseError: the
	// response broke the protocol (framing, JSON, vocabulary, status mapping).
	ErrInvalidResponse = errors.New("directory: invalid response")
	// ErrResponseTooLarge is wrapped when a body exceeds the read cap.
	ErrResponseTooLarge = errors.New("directory: response too large")
	// ErrTransport is wrapped by every *TransportError.
	ErrTransport = errors.New("directory: transport failure")
	// ErrSigning is returned when a request cannot be built or signed.
	ErrSigning = errors.New("directory: cannot sign request")
	// ErrLifecycleOff is wrapped by every *LifecycleOffError: the status
	// document says the Directory's lifecycle service is off, so no signed
	// request was sent.
	ErrLifecycleOff = errors.New("directory: lifecycle off at this Directory")
)

// LifecycleOffError is returned, before any signed request, by a call that
// negotiated its version from a status document reporting
// lifecycle_enabled or lifecycle_available false: the Directory would
// answer 503 lifecycle_unavailable. ClassOf calls it permanent, as that
// code is (reconsidered at the next daily interval).
type LifecycleOffError struct {
	// Enabled and Available are the status document's lifecycle_enabled
	// and lifecycle_available.
	Enabled, Available bool
}

// Error implements error.
func (e *LifecycleOffError) Error() string {
	if !e.Enabled {
		return "directory: the Directory's status reports lifecycle disabled (lifecycle_enabled: false); nothing sent"
	}
	return "directory: the Directory's status reports lifecycle unavailable (lifecycle_available: false); nothing sent"
}

// Unwrap returns ErrLifecycleOff.
func (e *LifecycleOffError) Unwrap() error { return ErrLifecycleOff }

// lifecycleOff is the error for a status document whose lifecycle is off,
// or nil.
func lifecycleOff(st *Status) error {
	if st.LifecycleEnabled && st.LifecycleAvailable {
		return nil
	}
	return &LifecycleOffError{Enabled: st.LifecycleEnabled, Available: st.LifecycleAvailable}
}

// ResponseError is a validated Directory error envelope. It keeps only the
// closed code, the HTTP status and an honoured Retry-After; the remote
// message is checked and discarded.
type ResponseError struct {
	// Version is the protocol version of the route called.
	Version Version
	// Operation is the lifecycle operation, empty for the status document.
	Operation Operation
	// StatusCode is the HTTP status, validated against Code.
	StatusCode int
	// Code is the closed error code; branch on it, never on text.
	Code ErrorCode
	// RetryAfter is the validated, capped remote lower bound, or 0. It is
	// set only for 429 rate_limited and 503 internal_error.
	RetryAfter time.Duration
	// RetryAt is when the caller may try again (completion time plus
	// RetryAfter), or the zero time.
	RetryAt time.Time
}

// Error implements error, with the closed code only.
func (e *ResponseError) Error() string {
	s := "directory: " + e.Version.String() + " " + string(e.Operation) + ": HTTP " +
		strconv.Itoa(e.StatusCode) + " " + string(e.Code)
	if e.RetryAfter > 0 {
		s += " (retry after " + e.RetryAfter.String() + ")"
	}
	return s
}

// Unwrap returns ErrRejected.
func (e *ResponseError) Unwrap() error { return ErrRejected }

// Reason is the closed vocabulary of invalid-response diagnostics.
type Reason string

// Invalid-response reasons.
const (
	ReasonStatusCode    Reason = "unexpected status code"
	ReasonRedirect      Reason = "redirect refused"
	ReasonContentType   Reason = "content type is not application/json"
	ReasonEncoding      Reason = "content encoding refused"
	ReasonTooLarge      Reason = "body too large"
	ReasonJSON          Reason = "malformed JSON"
	ReasonDuplicate     Reason = "duplicate name"
	ReasonUnknownField  Reason = "unknown or missing field"
	ReasonTrailing      Reason = "trailing data"
	ReasonVersion       Reason = "protocol version mismatch"
	ReasonOperation     Reason = "operation mismatch"
	ReasonOutcome       Reason = "outcome does not fit operation"
	ReasonActor         Reason = "relay actor mismatch"
	ReasonErrorCode     Reason = "unknown error code"
	ReasonCodeStatus    Reason = "error code does not fit status"
	ReasonMessage       Reason = "error message out of bounds"
	ReasonRetryAfter    Reason = "invalid Retry-After"
	ReasonStatusDoc     Reason = "invalid status document"
	ReasonStatusBaseURL Reason = "status public_base_url mismatch"
)

// InvalidResponseError reports a response that broke the protocol. It
// carries no remote bytes.
type InvalidResponseError struct {
	// StatusCode is the HTTP status of the offending response.
	StatusCode int
	// Reason is the closed diagnostic.
	Reason Reason
}

// Error implements error.
func (e *InvalidResponseError) Error() string {
	return "directory: invalid response (HTTP " + strconv.Itoa(e.StatusCode) + "): " + string(e.Reason)
}

// Unwrap returns ErrInvalidResponse, plus ErrResponseTooLarge for an
// oversize body.
func (e *InvalidResponseError) Unwrap() []error {
	if e.Reason == ReasonTooLarge {
		return []error{ErrInvalidResponse, ErrResponseTooLarge}
	}
	return []error{ErrInvalidResponse}
}

// TransportError reports a failure to exchange a request. The underlying
// error's text is deliberately dropped (it may quote remote data); only
// its kind survives.
type TransportError struct {
	Timeout  bool // the deadline passed
	Canceled bool // the caller's context was canceled
	// Blocked: the address policy refused every address of the host.
	// Retrying cannot help, so it is not retryable.
	Blocked bool
}

// Error implements error, naming only the kind of failure.
func (e *TransportError) Error() string {
	switch {
	case e.Canceled:
		return "directory: transport failure: canceled"
	case e.Timeout:
		return "directory: transport failure: timeout"
	case e.Blocked:
		return "directory: transport failure: address refused by policy"
	}
	return "directory: transport failure"
}

// Unwrap returns ErrTransport and, when applicable, context.Canceled or
// context.DeadlineExceeded.
func (e *TransportError) Unwrap() []error {
	switch {
	case e.Canceled:
		return []error{ErrTransport, context.Canceled}
	case e.Timeout:
		return []error{ErrTransport, context.DeadlineExceeded}
	}
	return []error{ErrTransport}
}

// Class is how a caller should react to a lifecycle error.
type Class int

// The retry classes of spec section 10.2.
const (
	// ClassNone: no error.
	ClassNone Class = iota
	// ClassRetryable: transport failure, 429 rate_limited, 500/503
	// internal_error. Back off, waiting at least RetryAfter.
	ClassRetryable
	// ClassReconcile: a validated heartbeat 409 relay_not_registered.
	// Heartbeat already performed the one allowed register + heartbeat.
	ClassReconcile
	// ClassPermanent: everything else, including invalid responses. Not
	// retried before the next scheduled interval.
	ClassPermanent
)

// String returns the class's lower-case name.
func (c Class) String() string {
	switch c {
	case ClassNone:
		return "none"
	case ClassRetryable:
		return "retryable"
	case ClassReconcile:
		return "reconcile"
	}
	return "permanent"
}

// ClassOf classifies an error returned by this package.
func ClassOf(err error) Class {
	if err == nil {
		return ClassNone
	}
	var te *TransportError
	if errors.As(err, &te) {
		if te.Canceled || te.Blocked {
			// The caller gave up, or policy forbids the address: retrying
			// cannot change either.
			return ClassPermanent
		}
		return ClassRetryable
	}
	var re *ResponseError
	if errors.As(err, &re) {
		switch re.Code {
		case CodeRateLimited, CodeInternalError:
			return ClassRetryable
		case CodeRelayNotRegistered:
			if re.Operation == OpHeartbeat && re.StatusCode == 409 {
				return ClassReconcile
			}
		}
	}
	return ClassPermanent
}

// RetryAfterOf returns the honoured remote Retry-After lower bound carried
// by err, or 0.
func RetryAfterOf(err error) time.Duration {
	var re *ResponseError
	if errors.As(err, &re) {
		return re.RetryAfter
	}
	return 0
}
