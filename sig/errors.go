package sig

import "errors"

// Sentinel errors. Verification failures wrap exactly one of the first
// seven, so a caller (or an inbox answering 401) can tell them apart with
// errors.Is.
var (
	// ErrNoSignature is returned when a request carries no Signature,
	// Authorization: Signature or Signature-Input header, or none with the
	// requested label or tag.
	ErrNoSignature = errors.New("sig: no signature")
	// ErrExpired is returned when a signature is outside the clock window:
	// created too long ago, created in the future, or past its expires.
	ErrExpired = errors.New("sig: signature expired or not yet valid")
	// ErrUnknownKey is returned when the key resolver cannot supply the key.
	ErrUnknownKey = errors.New("sig: unknown key")
	// ErrDigestMismatch is returned when a Digest or Content-Digest does not
	// match the body, or names no algorithm we check.
	ErrDigestMismatch = errors.New("sig: digest mismatch")
	// ErrBadSignature is returned when the signature bytes do not verify.
	ErrBadSignature = errors.New("sig: bad signature")
	// ErrUnsupportedAlgorithm is returned for an algorithm we do not
	// implement, or one that does not fit the key type.
	ErrUnsupportedAlgorithm = errors.New("sig: unsupported algorithm")
	// ErrMissingComponent is returned when a signature does not cover what
	// the verifier requires, or a covered component is absent from the
	// message.
	ErrMissingComponent = errors.New("sig: missing required component")

	// ErrMalformed is returned when a signature, digest or key header
	// cannot be parsed.
	ErrMalformed = errors.New("sig: malformed input")
	// ErrReplay is returned when the nonce store has already seen a
	// (key ID, nonce) pair.
	ErrReplay = errors.New("sig: replayed nonce")
	// ErrWeakKey is returned when asked to sign with an RSA key below
	// MinRSABits, or to verify with one below 1024 bits.
	ErrWeakKey = errors.New("sig: key too weak")
	// ErrUnsupportedKey is returned for a key type or curve we do not
	// handle.
	ErrUnsupportedKey = errors.New("sig: unsupported key type")
)

// SchemeMismatchError reports an RFC 9421 signature over @target-uri or
// @scheme that is bad with the Verifier's URLScheme and verifies with the
// other one: the usual cause is a server behind a TLS-terminating proxy
// configured with the wrong VerifierConfig.URLScheme, not a forgery. It
// wraps ErrBadSignature, so errors.Is(err, ErrBadSignature) holds and the
// request is still refused.
type SchemeMismatchError struct {
	// Signed is the scheme the signature was made for.
	Signed string
	// Configured is VerifierConfig.URLScheme.
	Configured string
}

// Error implements error.
func (e *SchemeMismatchError) Error() string {
	return "sig: bad signature: the signed @target-uri scheme is " + e.Signed +
		", the Verifier's URLScheme is " + e.Configured + "; set VerifierConfig.URLScheme to " + e.Signed
}

// Unwrap returns ErrBadSignature.
func (e *SchemeMismatchError) Unwrap() error { return ErrBadSignature }
