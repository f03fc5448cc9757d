package directory

import (
	"fmt"
	"strconv"
)

// Version is a Directory lifecycle protocol version.
type Version int

// The lifecycle protocol versions this package speaks.
const (
	V1 Version = 1
	V2 Version = 2
	V3 Version = 3
)

// MaxVersion is the highest lifecycle protocol version this package implements.
const MaxVersion = V3

// Valid reports whether v is a version this package implements.
func (v Version) Valid() bool { return v >= V1 && v <= MaxVersion }

// String returns "v1", "v2" or "v3".
func (v Version) String() string { return "v" + strconv.Itoa(int(v)) }

// Tag is the RFC 9421 tag parameter a request of this version carries.
func (v Version) Tag() string { return "activity-relay-directory-" + v.String() }

// Operation is a lifecycle operation.
type Operation string

// The lifecycle operations.
const (
	OpRegister   Operation = "register"
	OpHeartbeat  Operation = "heartbeat"
	OpUnregister Operation = "unregister"
)

func (o Operation) valid() bool {
	return o == OpRegister || o == OpHeartbeat || o == OpUnregister
}

// Path is the exact request target of operation o at version v.
func (o Operation) Path(v Version) string {
	return "/" + v.String() + "/relays/" + string(o)
}

// Outcome is the closed result vocabulary of a successful lifecycle call.
type Outcome string

// The outcomes, by operation.
const (
	OutcomeCreated   Outcome = "created"   // register, HTTP 201
	OutcomeUpdated   Outcome = "updated"   // register
	OutcomeUnchanged Outcome = "unchanged" // register
	OutcomeRecorded  Outcome = "recorded"  // heartbeat
	OutcomeRemoved   Outcome = "removed"   // unregister
	OutcomeAbsent    Outcome = "absent"    // unregister
)

// fits reports whether outcome o is valid for operation op.
func (o Outcome) fits(op Operation) bool {
	switch op {
	case OpRegister:
		return o == OutcomeCreated || o == OutcomeUpdated || o == OutcomeUnchanged
	case OpHeartbeat:
		return o == OutcomeRecorded
	case OpUnregister:
		return o == OutcomeRemoved || o == OutcomeAbsent
	}
	return false
}

// ErrorCode is the closed set of Directory error codes, the same for v1-v3.
type ErrorCode string

// The Directory error codes.
const (
	CodeInvalidRequest             ErrorCode = "invalid_request"
	CodeUnsupportedProtocolVersion ErrorCode = "unsupported_protocol_version"
	CodeAuthenticationFailed       ErrorCode = "authentication_failed"
	CodeRelaySuspended             ErrorCode = "relay_suspended"
	CodeEnrollmentClosed           ErrorCode = "enrollment_closed"
	CodeReplayDetected             ErrorCode = "replay_detected"
	CodeRelayNotRegistered         ErrorCode = "relay_not_registered"
	CodeRateLimited                ErrorCode = "rate_limited"
	CodeInternalError              ErrorCode = "internal_error"
	CodeLifecycleUnavailable       ErrorCode = "lifecycle_unavailable"
)

// statusFits reports whether an error code may arrive with HTTP status sc.
// The 405 row of the server's table is deliberately absent: the client
// never sends a wrong method, so a 405 is an invalid response.
func (c ErrorCode) statusFits(sc int) bool {
	switch c {
	case CodeInvalidRequest:
		return sc == 400 || sc == 413
	case CodeUnsupportedProtocolVersion:
		return sc == 400
	case CodeAuthenticationFailed:
		return sc == 401
	case CodeRelaySuspended, CodeEnrollmentClosed:
		return sc == 403
	case CodeReplayDetected, CodeRelayNotRegistered:
		return sc == 409
	case CodeRateLimited:
		return sc == 429
	case CodeInternalError:
		return sc == 500 || sc == 503
	case CodeLifecycleUnavailable:
		return sc == 503
	}
	return false
}

// State is the bounded local status of one configured Directory, as
// reported by `relay directory status` and persisted by a scheduler.
type State string

// The local states.
const (
	StateConfigured        State = "configured"
	StateRegistered        State = "registered"
	StateHeartbeatCurrent  State = "heartbeat-current"
	StateRetrying          State = "retrying"
	StateDisabled          State = "disabled"
	StateUnregisterPending State = "unregister-pending"
)

var states = []State{StateConfigured, StateRegistered, StateHeartbeatCurrent, StateRetrying, StateDisabled, StateUnregisterPending}

// States lists every local state in a stable order.
func States() []State { return append([]State(nil), states...) }

// ParseState parses one of the six local state names.
func ParseState(s string) (State, error) {
	for _, st := range states {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("%w: unknown local state", ErrInvalidState)
}

// Valid reports whether s is one of the six local states.
func (s State) Valid() bool { _, err := ParseState(string(s)); return err == nil }

// String returns the state name.
func (s State) String() string { return string(s) }

// MarshalText implements encoding.TextMarshaler, refusing unknown states.
func (s State) MarshalText() ([]byte, error) {
	if !s.Valid() {
		return nil, fmt.Errorf("%w: unknown local state", ErrInvalidState)
	}
	return []byte(s), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *State) UnmarshalText(b []byte) error {
	st, err := ParseState(string(b))
	if err != nil {
		return err
	}
	*s = st
	return nil
}
