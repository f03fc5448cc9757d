package client

import (
	"errors"
	"fmt"
	"net/netip"
)

// Sentinel errors, one per way a request fails; test them with errors.Is.
// Three cases also come as a type, for what only the failure knows: the
// refused address (*BlockedError) and a redirect's status and target
// (*TooManyRedirectsError, *RedirectError). Each type matches its sentinel.
var (
	// ErrInvalidURL is returned for a URL the client will not send to: not
	// http or https, no host, a zone in an IP literal, or a numeric host that
	// is not a plain IP literal.
	ErrInvalidURL = errors.New("client: invalid URL")
	// ErrHiddenService is returned for a .onion or .i2p host when
	// Config.AllowOnion is false.
	ErrHiddenService = errors.New("client: hidden-service host not allowed")
	// ErrBlocked is matched by every *BlockedError.
	ErrBlocked = errors.New("client: address refused")
	// ErrTooLarge is returned by Do when a response's Content-Length
	// exceeds Config.MaxBodyBytes, and by the body's Read when the bytes
	// read do; the message gives the limit.
	ErrTooLarge = errors.New("client: response body too large")
	// ErrTooManyRedirects is matched by every *TooManyRedirectsError.
	ErrTooManyRedirects = errors.New("client: too many redirects")
	// ErrRedirectLoop is returned when a GET's redirects come back to a URL
	// already visited in the same request.
	ErrRedirectLoop = errors.New("client: redirect loop")
	// ErrSchemeDowngrade is returned for a redirect from an https URL to an
	// http one, refused unless Config.AllowSchemeDowngrade: the hop would
	// send the request, and its signature, outside TLS. Nothing is sent to
	// the http URL.
	ErrSchemeDowngrade = errors.New("client: redirect from https to http")
	// ErrRedirectNotFollowed is matched by every *RedirectError.
	ErrRedirectNotFollowed = errors.New("client: redirect not followed")
	// ErrTimeout wraps the error of a request that ran out of time: the
	// overall Config.Timeout, or a dial, TLS or response-header timeout.
	ErrTimeout = errors.New("client: timeout")
)

// BlockedError reports a host whose address falls in a refused range.
type BlockedError struct {
	// Host is the host name or IP literal from the URL.
	Host string
	// Addr is the refused address as resolved (or as written, for a literal).
	Addr netip.Addr
	// Range is the refused range that matched, for diagnostics.
	Range netip.Prefix
}

// Error implements error.
func (e *BlockedError) Error() string {
	return fmt.Sprintf("client: address %s of host %q refused (in %s)", e.Addr, e.Host, e.Range)
}

// Is reports whether target is ErrBlocked.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// TooManyRedirectsError reports a GET or HEAD redirected more often than
// Config.MaxRedirects allows (with NoRedirects, the first redirect).
type TooManyRedirectsError struct {
	// Max is the number of hops allowed (0 with NoRedirects).
	Max int
	// URL is the URL that answered with the redirect not followed.
	URL string
	// StatusCode is that redirect's status.
	StatusCode int
	// Location is that redirect's target as the server sent it.
	Location string
}

// Error implements error.
func (e *TooManyRedirectsError) Error() string {
	return fmt.Sprintf("client: %s redirected (%d) after %d hops allowed", e.URL, e.StatusCode, e.Max)
}

// Is reports whether target is ErrTooManyRedirects.
func (e *TooManyRedirectsError) Is(target error) bool { return target == ErrTooManyRedirects }

// RedirectError reports a redirect answered to a request the client never
// redirects: anything but GET and HEAD, POST in particular. Nothing is re-sent.
type RedirectError struct {
	// Method is the request's method.
	Method string
	// URL is the URL that answered with the redirect.
	URL string
	// StatusCode is the redirect's status, such as 307 or 308.
	StatusCode int
	// Location is the redirect's target as the server sent it.
	Location string
}

// Error implements error.
func (e *RedirectError) Error() string {
	return fmt.Sprintf("client: %s %s answered %d; redirects of %s are not followed", e.Method, e.URL, e.StatusCode, e.Method)
}

// Is reports whether target is ErrRedirectNotFollowed.
func (e *RedirectError) Is(target error) bool { return target == ErrRedirectNotFollowed }
