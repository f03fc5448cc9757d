package deliver_test

import (
	"bytes"
	"io"
	"net/http"
	"slices"

	"github.com/fedkit/fedkit/sig"
)

// SignatureCheck verifies requests' signatures as a peer's inbox does, for
// a fedsim.Profile.Check (fedsim itself stays stdlib only): a host that reads only some schemes, that requires RFC
// 9421 components beyond Mastodon's, and that says what it wants with
// Accept-Signature on its refusals.
type SignatureCheck struct {
	// Verifier verifies a signature. Required.
	Verifier *sig.Verifier
	// Schemes are the schemes the host reads; a request signed with
	// another is refused. Defaults to both.
	Schemes []sig.Scheme
	// Require lists components an RFC 9421 signature must cover besides
	// what Verifier requires, by name ("content-type").
	Require []string
	// RequireNonce refuses an RFC 9421 signature without a nonce.
	RequireNonce bool
	// Refusal is the status of a refused signature. Defaults to 401.
	Refusal int
	// AcceptSignature, when set, is sent as the Accept-Signature field of
	// every refusal.
	AcceptSignature string
}

// Check is a fedsim.Profile.Check: 0 for a signature the host accepts, so
// the profile's answer stands, else the refusal.
func (c *SignatureCheck) Check(r *http.Request, body []byte) (int, http.Header) {
	if c.accepts(r, body) {
		return 0, nil
	}
	st := c.Refusal
	if st == 0 {
		st = http.StatusUnauthorized
	}
	var h http.Header
	if c.AcceptSignature != "" {
		h = http.Header{sig.AcceptSignatureHeader: {c.AcceptSignature}}
	}
	return st, h
}

func (c *SignatureCheck) accepts(r *http.Request, body []byte) bool {
	rq := r.Clone(r.Context())
	rq.Body = io.NopCloser(bytes.NewReader(body))
	rq.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	rq.ContentLength = int64(len(body))
	res, err := c.Verifier.Verify(rq)
	if err != nil {
		return false
	}
	if len(c.Schemes) > 0 && !slices.Contains(c.Schemes, res.Scheme) {
		return false
	}
	if res.Scheme != sig.SchemeRFC9421 {
		return true
	}
	sigs, err := sig.ParseRFC9421Signatures(r.Header)
	if err != nil {
		return false
	}
	for _, s := range sigs {
		if s.Label != res.Label {
			continue
		}
		for _, name := range c.Require {
			if !s.Covers(name) {
				return false
			}
		}
		return !c.RequireNonce || s.Nonce != ""
	}
	return false
}
