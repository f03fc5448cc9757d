package fetch

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/fedkit/fedkit/sig"
)

// Sentinels, matched with errors.Is. Typed errors below wrap them.
var (
	// ErrContentType: the response was not ActivityPub JSON (*ContentTypeError).
	ErrContentType = errors.New("fetch: not an ActivityPub document")
	// ErrIDMismatch: the document's id disagrees with where it was fetched
	// from, even after asking the id's own origin (*IDMismatchError).
	ErrIDMismatch = errors.New("fetch: document id mismatch")
	// ErrAuthorOrigin: attributedTo or actor is on another origin than the
	// document's id (*AuthorOriginError).
	ErrAuthorOrigin = errors.New("fetch: author on another origin")
	// ErrCrossOriginPage: a collection page is not on the collection's
	// origin (*CrossOriginPageError).
	ErrCrossOriginPage = errors.New("fetch: collection page on another origin")
	// ErrWalkLimit: a walk reached its WalkLimits (*WalkLimitError).
	ErrWalkLimit = errors.New("fetch: walk limit reached")
	// ErrNotFound: the server answered 404 (*StatusError).
	ErrNotFound = errors.New("fetch: not found")
	// ErrGone: the server answered 410 Gone (*StatusError).
	ErrGone = errors.New("fetch: gone")
	// ErrTemporary: the server answered 408, 429 or 5xx; try again later (*StatusError).
	ErrTemporary = errors.New("fetch: temporary failure")
	// ErrBudgetExhausted: the context's Budget allows no more fetches.
	ErrBudgetExhausted = errors.New("fetch: fetch budget exhausted")
	// ErrMalformed: the body is not the JSON (or XML) expected.
	ErrMalformed = errors.New("fetch: malformed document")
	// ErrProof: a portable object's Data Integrity proof is missing or invalid.
	ErrProof = errors.New("fetch: portable object proof invalid")
	// ErrUnsupported: a URL scheme or DID method this package does not fetch.
	ErrUnsupported = errors.New("fetch: unsupported")
	// ErrInvalidAddress: a handle that is not user@host.
	ErrInvalidAddress = errors.New("fetch: invalid address")
	// ErrNoActor: a WebFinger answer without an ActivityPub self link.
	ErrNoActor = errors.New("fetch: no ActivityPub actor link")
	// ErrSubject: a WebFinger subject that is missing, malformed, or
	// redirects to a handle that does not name itself.
	ErrSubject = errors.New("fetch: bad WebFinger subject")
	// ErrActorMismatch: Confirm found another actor than expected.
	ErrActorMismatch = errors.New("fetch: actor does not match")
	// ErrNoNodeInfo: a server links no NodeInfo document it may serve.
	ErrNoNodeInfo = errors.New("fetch: no usable NodeInfo link")
)

// clip bounds remote-influenced text placed in error messages.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}

// StatusError is a response other than the success expected. It matches
// ErrNotFound (404), ErrGone (410) and ErrTemporary (408, 429, 5xx) with
// errors.Is; every other status is permanent.
type StatusError struct {
	// URL is the URL that answered.
	URL string
	// StatusCode is the HTTP status.
	StatusCode int
	// RetryAfter is the server's Retry-After, zero when absent.
	RetryAfter time.Duration
}

// Error implements error.
func (e *StatusError) Error() string {
	return fmt.Sprintf("fetch: %s answered %d %s", clip(e.URL), e.StatusCode, http.StatusText(e.StatusCode))
}

// Is matches the status sentinels.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrGone:
		return e.StatusCode == http.StatusGone
	case ErrTemporary:
		return temporary(e.StatusCode)
	}
	return false
}

func temporary(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500
}

// ContentTypeError is a response whose type is not ActivityPub.
type ContentTypeError struct {
	// URL is where the response came from.
	URL string
	// ContentType is the Content-Type it carried.
	ContentType string
}

// Error implements error.
func (e *ContentTypeError) Error() string {
	return fmt.Sprintf("fetch: %s served %s, not ActivityPub", clip(e.URL), clip(e.ContentType))
}

// Unwrap returns ErrContentType.
func (e *ContentTypeError) Unwrap() error { return ErrContentType }

// IDMismatchError is a document whose id could not be trusted.
type IDMismatchError struct {
	URL string // where the document was served from
	ID  string // the id it claims ("" when it has none)
}

// Error implements error.
func (e *IDMismatchError) Error() string {
	return fmt.Sprintf("fetch: document at %s has id %s", clip(e.URL), clip(e.ID))
}

// Unwrap returns ErrIDMismatch.
func (e *IDMismatchError) Unwrap() error { return ErrIDMismatch }

// AuthorOriginError is a document naming an author on another origin.
type AuthorOriginError struct {
	// ID is the document's id.
	ID string
	// Author is the attributedTo or actor on another origin.
	Author string
}

// Error implements error.
func (e *AuthorOriginError) Error() string {
	return fmt.Sprintf("fetch: %s names author %s on another origin", clip(e.ID), clip(e.Author))
}

// Unwrap returns ErrAuthorOrigin.
func (e *AuthorOriginError) Unwrap() error { return ErrAuthorOrigin }

// CrossOriginPageError is a collection page off the collection's origin.
type CrossOriginPageError struct {
	Origin string // the origin the walk keeps to
	// Page is the page URL off that origin.
	Page string
}

// Error implements error.
func (e *CrossOriginPageError) Error() string {
	return fmt.Sprintf("fetch: page %s is not on %s", clip(e.Page), clip(e.Origin))
}

// Unwrap returns ErrCrossOriginPage.
func (e *CrossOriginPageError) Unwrap() error { return ErrCrossOriginPage }

// WalkLimitError ends a walk that reached its limits.
type WalkLimitError struct {
	Pages, Items int // what was read
	// Limits are the limits in force.
	Limits WalkLimits
}

// Error implements error.
func (e *WalkLimitError) Error() string {
	return fmt.Sprintf("fetch: walk stopped after %d pages and %d items (limits %d, %d)", e.Pages, e.Items, e.Limits.Pages, e.Limits.Items)
}

// Unwrap returns ErrWalkLimit.
func (e *WalkLimitError) Unwrap() error { return ErrWalkLimit }

// ErrNoKey: a key's document does not publish it for its owner
// (*NoKeyError).
var ErrNoKey = errors.New("fetch: document does not publish the key")

// ErrRefetchTooSoon: KeyResolver.RefetchKey was asked for a key fetched
// less than KeyResolverConfig.RefetchInterval ago.
var ErrRefetchTooSoon = errors.New("fetch: key fetched too recently to refetch")

// NoKeyError is a key that its documents do not establish: missing, owned
// by another actor, on another origin, or not listed by its owner.
type NoKeyError struct {
	// KeyID is the key asked for.
	KeyID string
	// Reason is a fixed phrase saying which rule failed.
	Reason string
}

// Error implements error.
func (e *NoKeyError) Error() string {
	return fmt.Sprintf("fetch: key %s: %s", clip(e.KeyID), e.Reason)
}

// Unwrap returns ErrNoKey.
func (e *NoKeyError) Unwrap() error { return ErrNoKey }

// KeyGoneError is a key whose document or owner answered 410 Gone: the
// account was deleted. It matches ErrGone and sig.ErrGone, so an inbox
// (package sig/inbox) can accept the account's own Delete as Mastodon does.
type KeyGoneError struct {
	// KeyID is the key asked for.
	KeyID string
	// URL is the document that answered 410.
	URL string
}

// Error implements error.
func (e *KeyGoneError) Error() string {
	return fmt.Sprintf("fetch: key %s: %s is gone", clip(e.KeyID), clip(e.URL))
}

// Is matches ErrGone and sig.ErrGone.
func (e *KeyGoneError) Is(target error) bool { return target == ErrGone || target == sig.ErrGone }
