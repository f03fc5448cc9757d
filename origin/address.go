package origin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxAddressBytes bounds the whole input ParseAddress accepts, the
// lexicon's maxLength for an actor parameter.
const MaxAddressBytes = 2048

// AddressKind says which form ParseAddress recognised.
type AddressKind uint8

// Address forms.
const (
	KindDID    AddressKind = iota + 1 // did:plc:..., did:web:...
	KindHandle                        // alice.bsky.social
	KindOrigin                        // name@host or @name@host: a bridged account's origin address
)

// Address is a parsed actor identifier.
type Address struct {
	// Kind which form the address took.
	Kind AddressKind
	// DID is set for KindDID.
	DID string
	// Handle is set for KindHandle, lower-cased.
	Handle string
	// Name is set for KindOrigin, NFC-normalised with its case kept.
	Name string
	// Host is set for KindOrigin, normalised as a domain.
	Host string
}

// String returns the address in a form ParseAddress reads back: the DID,
// the handle, or "@name@host".
func (a Address) String() string {
	switch a.Kind {
	case KindDID:
		return a.DID
	case KindHandle:
		return a.Handle
	case KindOrigin:
		return "@" + a.Name + "@" + a.Host
	}
	return ""
}

// BadRequestCode is a closed code for why an address was refused.
type BadRequestCode string

// Why ParseAddress refuses an input.
const (
	BadEmpty       BadRequestCode = "empty"
	BadTooLong     BadRequestCode = "too-long"
	BadUTF8        BadRequestCode = "invalid-utf8"
	BadControl     BadRequestCode = "control-character"
	BadDID         BadRequestCode = "invalid-did"
	BadHandle      BadRequestCode = "invalid-handle"
	BadName        BadRequestCode = "invalid-name"
	BadHost        BadRequestCode = "invalid-host"
	BadNameTooLong BadRequestCode = "name-too-long"
)

// ErrBadRequest is wrapped by every *BadRequestError.
var ErrBadRequest = errors.New("origin: bad address")

// BadRequestError is returned by ParseAddress for input that must be
// refused (HTTP 400) before any query is made.
type BadRequestError struct {
	// Code says what was wrong, a closed set safe to show a client.
	Code BadRequestCode
}

// Error implements error.
func (e *BadRequestError) Error() string { return "origin: bad address: " + string(e.Code) }

// Unwrap returns ErrBadRequest.
func (e *BadRequestError) Unwrap() error { return ErrBadRequest }

func bad(c BadRequestCode) error { return &BadRequestError{Code: c} }

// ParseAddress parses a DID, a handle, "name@host" or "@name@host". The
// last '@' separates name from host; the name keeps its case. A name over
// MaxUsernameBytes, input with invalid UTF-8 or with control or invisible
// format characters (the ones Sanitize strips from stored names) is a
// *BadRequestError.
func ParseAddress(s string) (Address, error) {
	if s == "" {
		return Address{}, bad(BadEmpty)
	}
	if len(s) > MaxAddressBytes {
		return Address{}, bad(BadTooLong)
	}
	if !utf8.ValidString(s) {
		return Address{}, bad(BadUTF8)
	}
	for _, r := range s {
		if isInvisibleControl(r) {
			return Address{}, bad(BadControl)
		}
	}
	at := strings.LastIndexByte(s, '@')
	switch {
	case at > 0:
		name, host := s[:at], s[at+1:]
		// One leading '@' is the fediverse's "@name@host" spelling.
		name = strings.TrimPrefix(name, "@")
		if name == "" {
			return Address{}, bad(BadName)
		}
		name = norm.NFC.String(name)
		if len(name) > MaxUsernameBytes {
			return Address{}, bad(BadNameTooLong)
		}
		h, err := NormalizeDomain(host)
		if err != nil {
			return Address{}, bad(BadHost)
		}
		return Address{Kind: KindOrigin, Name: name, Host: h}, nil
	case at == 0:
		// "@alice.example": a handle written the fediverse way.
		s = s[1:]
	}
	if strings.HasPrefix(s, "did:") {
		if !validDID(s) {
			return Address{}, bad(BadDID)
		}
		return Address{Kind: KindDID, DID: s}, nil
	}
	h, err := NormalizeDomain(s)
	if err != nil || !plainASCII(s) {
		return Address{}, bad(BadHandle)
	}
	return Address{Kind: KindHandle, Handle: h}, nil
}

// validDID checks the generic DID syntax: "did:", a lower-case method, ':',
// and a method-specific id of [A-Za-z0-9._:%-] not ending in ':'.
func validDID(s string) bool {
	rest := s[len("did:"):]
	i := strings.IndexByte(rest, ':')
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		if c := rest[j]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	id := rest[i+1:]
	if id == "" || id[len(id)-1] == ':' {
		return false
	}
	for j := 0; j < len(id); j++ {
		c := id[j]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:%-", c) >= 0) {
			return false
		}
	}
	return true
}

var (
	// ErrNotFound is returned by LookupOrigin when no account has the address.
	ErrNotFound = errors.New("origin: no account with that address")
	// ErrAmbiguous is returned by LookupOrigin and Choose when two or more
	// accounts match the address case-insensitively and none exactly (HTTP
	// 409 AmbiguousActor).
	ErrAmbiguous = errors.New("origin: address matches more than one account")
)

// OriginIndex is the application's lookup of stored origin fields, for
// LookupOrigin. Both methods return the DIDs of matching rows; an error is
// an outage (HTTP 500, never 404).
type OriginIndex interface {
	// ExactOrigin matches origin_username = name AND origin = host.
	ExactOrigin(ctx context.Context, name, host string) ([]string, error)
	// FoldOrigin matches lower(origin_username) = lower(name) AND origin = host.
	FoldOrigin(ctx context.Context, name, host string) ([]string, error)
}

// LookupOrigin resolves a KindOrigin address to a DID with the resolution
// policy: an exact match first, then a unique case-insensitive match; two
// case-insensitive matches are ErrAmbiguous, none ErrNotFound. Shared links
// (exact addresses) therefore always resolve and no account becomes
// unreachable. There is deliberately no fallback that guesses a bridge
// handle from the address.
func LookupOrigin(ctx context.Context, idx OriginIndex, a Address) (string, error) {
	if a.Kind != KindOrigin {
		return "", fmt.Errorf("%w: not a name@host address", ErrBadRequest)
	}
	exact, err := idx.ExactOrigin(ctx, a.Name, a.Host)
	if err != nil {
		return "", fmt.Errorf("origin: exact lookup: %w", err)
	}
	if did, err := unique(exact); did != "" || err != nil {
		return did, err
	}
	fold, err := idx.FoldOrigin(ctx, a.Name, a.Host)
	if err != nil {
		return "", fmt.Errorf("origin: case-insensitive lookup: %w", err)
	}
	did, err := unique(fold)
	if err != nil {
		return "", err
	}
	if did == "" {
		return "", ErrNotFound
	}
	return did, nil
}

// Match is a stored row whose origin username matched an address
// case-insensitively.
type Match struct {
	// DID is the matching row's DID.
	DID string
	// Username is the origin username stored on that row.
	Username string
}

// Choose applies the resolution policy to rows already fetched by a
// case-insensitive query: the exact Username match wins, else a unique
// row, else ErrAmbiguous; no rows is ErrNotFound. Rows of one DID count once.
func Choose(name string, rows []Match) (string, error) {
	var exact, all []string
	for _, m := range rows {
		all = append(all, m.DID)
		if m.Username == name {
			exact = append(exact, m.DID)
		}
	}
	if did, err := unique(exact); did != "" || err != nil {
		return did, err
	}
	did, err := unique(all)
	if err != nil {
		return "", err
	}
	if did == "" {
		return "", ErrNotFound
	}
	return did, nil
}

// unique returns the single distinct DID in dids, "" for none, or
// ErrAmbiguous.
func unique(dids []string) (string, error) {
	var one string
	for _, d := range dids {
		if one != "" && d != one {
			return "", ErrAmbiguous
		}
		one = d
	}
	return one, nil
}
