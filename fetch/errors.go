package fetch

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/sig"
)

// Sentinels, matched with errors.Is; the message says which URL or id and,
// bounded, what the server sent. Only a status has a type of its own,
// *StatusError, for its status code and Retry-After.
var (
	// ErrContentType: the response was not ActivityPub JSON.
	ErrContentType = errors.New("fetch: not an ActivityPub document")
	// ErrIDMismatch: the document's id disagrees with where it was fetched
	// from, even after asking the id's own origin.
	ErrIDMismatch = errors.New("fetch: document id mismatch")
	// ErrAuthorOrigin: attributedTo or actor is on another origin than the
	// document's id.
	ErrAuthorOrigin = errors.New("fetch: author on another origin")
	// ErrCrossOriginPage: a collection page is not on the collection's
	// origin.
	ErrCrossOriginPage = errors.New("fetch: collection page on another origin")
	// ErrWalkLimit: a walk reached its WalkLimits with more to come;
	// Walk.Pages and Walk.Items say how far it got.
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

// ErrNoKey: a key that its documents do not establish: missing, owned by
// another actor, on another origin, or not listed by its owner.
var ErrNoKey = errors.New("fetch: key not established by its documents")

// ErrRefetchTooSoon: KeyResolver.RefetchKey was asked for a key fetched
// less than KeyResolverConfig.RefetchInterval ago.
var ErrRefetchTooSoon = errors.New("fetch: key fetched too recently to refetch")

// The failures below carry remote text, so they are built here, bounded.

func contentTypeError(url, contentType string) error {
	return fmt.Errorf("%w: %s served %s", ErrContentType, clip(url), clip(contentType))
}

// idMismatch: the document at url claims id ("" when it has none).
func idMismatch(url, id string) error {
	return fmt.Errorf("%w: document at %s has id %s", ErrIDMismatch, clip(url), clip(id))
}

func authorOriginError(id, author string) error {
	return fmt.Errorf("%w: %s names author %s", ErrAuthorOrigin, clip(id), clip(author))
}

// crossOriginPage: page is off origin, the one the walk keeps to.
func crossOriginPage(origin, page string) error {
	return fmt.Errorf("%w: page %s is not on %s", ErrCrossOriginPage, clip(page), clip(origin))
}

// noKey: reason is a fixed phrase saying which rule failed.
func noKey(keyID, reason string) error {
	return fmt.Errorf("%w: key %s: %s", ErrNoKey, clip(keyID), reason)
}

// tooLarge is a document over a cap of this package's (the client's own
// cap fails as client.ErrTooLarge too).
func tooLarge(url string, limit int64) error {
	return fmt.Errorf("fetch: %w: %s over %d bytes", client.ErrTooLarge, clip(url), limit)
}

// keyGoneError is a key whose document or owner (url) answered 410 Gone:
// the account was deleted. It matches ErrGone and sig.ErrGone, so an inbox
// (package sig/inbox) can accept the account's own Delete as Mastodon does.
type keyGoneError struct{ keyID, url string }

func (e *keyGoneError) Error() string {
	return fmt.Sprintf("fetch: key %s: %s is gone", clip(e.keyID), clip(e.url))
}

func (e *keyGoneError) Is(target error) bool { return target == ErrGone || target == sig.ErrGone }
