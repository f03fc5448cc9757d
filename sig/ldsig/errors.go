package ldsig

import (
	"errors"
	"fmt"
)

// Sentinel errors. A failed VerifyActivity wraps exactly one of them (an
// unknown context is an *UnknownContextError, which matches
// ErrUnknownContext), or the key resolver's error wrapped with
// sig.ErrUnknownKey.
var (
	// ErrNoSignature is returned when the document has no signature
	// member.
	ErrNoSignature = errors.New("ldsig: no signature")
	// ErrUnsupportedType is returned for a signature whose type is not
	// RsaSignature2017, or whose creator's key is not an RSA key.
	ErrUnsupportedType = errors.New("ldsig: unsupported signature type")
	// ErrBadSignature is returned when signatureValue does not verify over
	// the canonicalised document and options.
	ErrBadSignature = errors.New("ldsig: bad signature")
	// ErrNotOwned is returned when the creator's key has no owner, or its
	// owner is not the activity's actor.
	ErrNotOwned = errors.New("ldsig: creator not owned by the actor")
	// ErrUnknownContext is matched by *UnknownContextError.
	ErrUnknownContext = errors.New("ldsig: unknown JSON-LD context")
	// ErrContextOverride is returned when a context inside the document
	// gives a term another meaning than the shipped contexts give it: the
	// signature would hold while a reader of the JSON sees other values
	// (to and cc swapped, a Delete read as a Create).
	ErrContextOverride = errors.New("ldsig: context redefines a known term")
	// ErrMalformed is returned when the body is not a JSON object, has
	// duplicate member names, or the signature's members are not of the
	// expected types, or the JSON-LD processor refuses the document.
	ErrMalformed = errors.New("ldsig: malformed document")
	// ErrTooComplex is returned for a document over the size, nesting or
	// value-count bounds, or whose blank nodes are linked in groups
	// canonicalisation could take exponential time over.
	ErrTooComplex = errors.New("ldsig: document too large or too complex")
)

// UnknownContextError is returned when the document names a context the
// package does not ship and the caller did not supply: it is never
// fetched.
type UnknownContextError struct {
	URL string // as the document names it, truncated to 256 bytes
}

func (e *UnknownContextError) Error() string {
	u := e.URL
	if len(u) > 256 {
		u = u[:256]
	}
	return fmt.Sprintf("ldsig: unknown JSON-LD context %q (not shipped, never fetched)", u)
}

// Unwrap returns ErrUnknownContext.
func (e *UnknownContextError) Unwrap() error { return ErrUnknownContext }
