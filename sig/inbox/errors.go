package inbox

import (
	"errors"
	"fmt"
	"net/http"
)

// Reason says why an inbox refused a request. Each maps to the status
// Mastodon answers in the same case.
type Reason uint8

// Refusal reasons.
const (
	// ReasonBodyTooLarge: the body is over Config.MaxBodyBytes (413).
	ReasonBodyTooLarge Reason = iota + 1
	// ReasonNotActivity: the body is not a JSON object with a type and a
	// single actor (400).
	ReasonNotActivity
	// ReasonMalformedSignature: the signature header cannot be parsed (400).
	ReasonMalformedSignature
	// ReasonNoSignature: the request is not signed (401).
	ReasonNoSignature
	// ReasonBadSignature: the signature does not verify: bad bytes,
	// expired, unknown key, digest mismatch (401).
	ReasonBadSignature
	// ReasonKeyGone: the signer's key or actor answered 410 Gone, and the
	// activity is not that actor's Delete of itself (401).
	ReasonKeyGone
	// ReasonSignerNotActor: the signature is valid but by someone other
	// than the activity's actor, and nothing else vouches for the activity
	// (no LD signature, proof or refetch established it). Answered 202 and
	// dropped, as Mastodon does: the sender (often a relay forwarding what
	// it was sent) cannot fix it by retrying, and a 401 would make it retry
	// for hours.
	ReasonSignerNotActor
)

var reasonText = [...]string{
	ReasonBodyTooLarge:       "body too large",
	ReasonNotActivity:        "not an activity",
	ReasonMalformedSignature: "malformed signature",
	ReasonNoSignature:        "no signature",
	ReasonBadSignature:       "signature refused",
	ReasonKeyGone:            "signer gone",
	ReasonSignerNotActor:     "signer is not the activity's actor",
}

// String returns a short fixed phrase, safe to send to the peer.
func (r Reason) String() string {
	if int(r) < len(reasonText) && reasonText[r] != "" {
		return reasonText[r]
	}
	return fmt.Sprintf("reason %d", uint8(r))
}

// Status is the HTTP status answered for r, as Mastodon answers.
func (r Reason) Status() int {
	switch r {
	case ReasonBodyTooLarge:
		return http.StatusRequestEntityTooLarge
	case ReasonNotActivity, ReasonMalformedSignature:
		return http.StatusBadRequest
	case ReasonSignerNotActor:
		return http.StatusAccepted
	}
	return http.StatusUnauthorized
}

// ErrRefused is matched (errors.Is) by every *RefusalError.
var ErrRefused = errors.New("inbox: refused")

// RefusalError is a request the inbox refused. Err, when set, is the
// underlying failure (a sig error for signature reasons); it is logged,
// never sent to the peer.
type RefusalError struct {
	Reason Reason
	Err    error
}

// Error implements error.
func (e *RefusalError) Error() string {
	if e.Err != nil {
		return "inbox: " + e.Reason.String() + ": " + e.Err.Error()
	}
	return "inbox: " + e.Reason.String()
}

// Unwrap returns ErrRefused and Err.
func (e *RefusalError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrRefused, e.Err}
	}
	return []error{ErrRefused}
}

func refuse(r Reason, err error) *RefusalError { return &RefusalError{Reason: r, Err: err} }
