package identity

import (
	"errors"
	"fmt"
)

// Identifier errors.
var (
	// ErrInvalidDID is wrapped by ParseDID for a malformed DID or a method
	// other than plc and web.
	ErrInvalidDID = errors.New("identity: invalid DID")
	// ErrInvalidHandle is wrapped by ParseHandle for a malformed handle.
	ErrInvalidHandle = errors.New("identity: invalid handle")
)

// Resolution errors, matched with errors.Is.
var (
	// ErrDIDNotFound: the PLC directory or did:web host answered 404.
	ErrDIDNotFound = errors.New("identity: DID not found")
	// ErrDIDResolutionFailed: the DID document could not be fetched or parsed.
	ErrDIDResolutionFailed = errors.New("identity: DID resolution failed")
	// ErrInvalidDocument: the DID document is not JSON or names another id.
	// It is wrapped together with ErrDIDResolutionFailed.
	ErrInvalidDocument = errors.New("identity: invalid DID document")
	// ErrDocumentTooLarge: a DID document or well-known body exceeded its cap.
	// It is wrapped together with ErrDIDResolutionFailed or
	// ErrHandleResolutionFailed.
	ErrDocumentTooLarge = errors.New("identity: response too large")
	// ErrHandleNotFound: DNS answered NXDOMAIN (or no did= record) and the
	// well-known endpoint answered 404.
	ErrHandleNotFound = errors.New("identity: handle not found")
	// ErrHandleResolutionFailed: a handle lookup failed in a way that is not
	// an authoritative "no such handle" (SERVFAIL, timeouts, bad bodies).
	ErrHandleResolutionFailed = errors.New("identity: handle resolution failed")
	// ErrHandleNotResolvable: handle.invalid or a reserved TLD.
	ErrHandleNotResolvable = errors.New("identity: handle not resolvable")
	// ErrHandleUnverified is returned by VerifiedHandle when there is no
	// resolution or its handle did not verify both ways.
	ErrHandleUnverified = errors.New("identity: handle unverified")
	// ErrSubjectMismatch is returned by VerifiedHandle when the resolution
	// names another DID than the subject, and wrapped by ParseDocument (so
	// by every resolution) when the document's id names another DID. A
	// refresh that meets it fails permanently with ReasonSubjectMismatch.
	ErrSubjectMismatch = errors.New("identity: resolution names another DID")
	// ErrCacheMiss is returned by a CacheStore with no entry for the key.
	ErrCacheMiss = errors.New("identity: cache miss")
)

// Application errors the Store and hooks return.
var (
	// ErrUnknownDID: the application has no row for the DID.
	ErrUnknownDID = errors.New("identity: unknown DID")
	// ErrHandleTaken: another row holds the handle (a unique conflict).
	ErrHandleTaken = errors.New("identity: handle held by another row")
	// ErrHostedByMismatch: a community's hosted-by claim no longer verifies.
	ErrHostedByMismatch = errors.New("identity: hosted-by claim does not verify")
	// ErrLockBusy: a Lock could not be taken within its wait.
	ErrLockBusy = errors.New("identity: refresh lock busy")
)

// Refresh outcome classes, matched with errors.Is on what the Refresher returns.
var (
	// ErrUnresolved: the event names something not resolvable yet; redrive
	// it later. A busy lock and a live debounce are unresolved too.
	ErrUnresolved = errors.New("identity: unresolved reference")
	// ErrPermanent: the event can never succeed; drop it.
	ErrPermanent = errors.New("identity: permanent failure")
	// ErrBusy: another refresh of the DID holds the lock. Defer the event
	// without spending a redrive attempt.
	ErrBusy = errors.New("identity: refresh busy")
	// ErrDeferred marks an unresolved outcome whose redrive must not spend an
	// attempt because nothing new was learned (a busy lock, a live debounce).
	ErrDeferred = errors.New("identity: deferred")
	// ErrLockUnavailable: the Refresher has no usable Lock (nil, or a
	// non-positive wait); the refresh failed closed before any purge.
	ErrLockUnavailable = errors.New("identity: no usable refresh lock")
)

// InvalidIdentifierError reports a malformed DID or handle.
type InvalidIdentifierError struct {
	Kind string // "did" or "handle"
	// Reason says what is malformed.
	Reason string
}

// Error implements error.
func (e *InvalidIdentifierError) Error() string {
	return fmt.Sprintf("identity: invalid %s: %s", e.Kind, e.Reason)
}

// Is matches ErrInvalidDID or ErrInvalidHandle by Kind.
func (e *InvalidIdentifierError) Is(target error) bool {
	return (target == ErrInvalidDID && e.Kind == "did") || (target == ErrInvalidHandle && e.Kind == "handle")
}

// Class is what an application's event consumer should do with a failed refresh.
type Class int

const (
	// ClassUnresolved: redrive later, spending an attempt.
	ClassUnresolved Class = iota + 1
	// ClassPermanent: drop the event.
	ClassPermanent
	// ClassBusy: defer without spending an attempt.
	ClassBusy
)

// String returns the class's name.
func (c Class) String() string {
	switch c {
	case ClassUnresolved:
		return "unresolved"
	case ClassPermanent:
		return "permanent"
	case ClassBusy:
		return "busy"
	}
	return "unknown"
}

// Reason codes carried by RefreshError and SweepRow. They form a closed set.
const (
	ReasonMatched          = "matched"           // stored handle equals the verified one
	ReasonUpdated          = "updated"           // a new verified handle was written
	ReasonWouldUpdate      = "would-update"      // dry run: a write is needed
	ReasonLockBusy         = "lock-busy"         // ErrBusy
	ReasonLockUnavailable  = "lock-unavailable"  // ErrLockUnavailable
	ReasonDebounced        = "debounced"         // the timeout debounce is live
	ReasonResolveFailed    = "resolve-failed"    // the DID document could not be resolved
	ReasonResolveTimeout   = "resolve-timeout"   // resolution hit its deadline (debounced from now on)
	ReasonUnverified       = "unverified"        // the handle did not verify both ways
	ReasonSubjectMismatch  = "subject-mismatch"  // the resolution named another DID
	ReasonInvalidDID       = "invalid-did"       // malformed or unsupported DID
	ReasonInvalidHandle    = "invalid-handle"    // community handle refused by the application
	ReasonPurgeFailed      = "purge-failed"      // a cache purge failed
	ReasonStoreFailed      = "store-failed"      // an application store call failed
	ReasonRowGone          = "row-gone"          // the row vanished before the in-lock re-read
	ReasonHandleTaken      = "handle-taken"      // ErrHandleTaken
	ReasonHostedByMismatch = "hostedby-mismatch" // ErrHostedByMismatch
	ReasonHostedByPending  = "hostedby-pending"  // the hosted-by check could not complete
	ReasonCancelled        = "cancelled"         // the caller's context ended
)

// RefreshError is the error a Refresher returns. Decide what to do with
// errors.Is against ErrUnresolved, ErrPermanent, ErrBusy and ErrDeferred, or
// read Class; never match the message.
type RefreshError struct {
	// DID is the DID refreshed.
	DID DID
	// Class says what the consumer should do.
	Class    Class
	Deferred bool   // redrive without spending an attempt
	Reason   string // one of the Reason constants
	Err      error  // the cause, possibly nil
}

// Error implements error.
func (e *RefreshError) Error() string {
	s := fmt.Sprintf("identity: refresh %s: %s (%s)", e.DID, e.Reason, e.Class)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *RefreshError) Unwrap() error { return e.Err }

// Is maps the class onto the class sentinels. A busy refresh is also
// unresolved and deferred, so consumers that know only ErrUnresolved still
// redrive it.
func (e *RefreshError) Is(target error) bool {
	switch target {
	case ErrUnresolved:
		return e.Class == ClassUnresolved || e.Class == ClassBusy
	case ErrPermanent:
		return e.Class == ClassPermanent
	case ErrBusy:
		return e.Class == ClassBusy
	case ErrDeferred:
		return e.Deferred
	}
	return false
}

func unresolved(did DID, reason string, err error) *RefreshError {
	return &RefreshError{DID: did, Class: ClassUnresolved, Reason: reason, Err: err}
}

func permanent(did DID, reason string, err error) *RefreshError {
	return &RefreshError{DID: did, Class: ClassPermanent, Reason: reason, Err: err}
}
