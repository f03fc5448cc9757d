package inbox

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/fedkit/fedkit/sig"
)

// AuthorizedFetchConfig configures NewAuthorizedFetch. A nil
// *AuthorizedFetchConfig means defaults.
type AuthorizedFetchConfig struct {
	// Verifier configures the signature check. Defaults to the zero
	// sig.VerifierConfig.
	Verifier sig.VerifierConfig
	// Allow lets a request through unsigned. Give it the instance actor's
	// path: a server fetching that actor's key to check our signed GET
	// cannot sign its own fetch with a key we have not fetched yet.
	// Defaults to nil: nothing is allowed unsigned.
	Allow func(r *http.Request) bool
	// DisableKeyRefetch never refetches a key after a failed signature.
	// Defaults to false.
	DisableKeyRefetch bool
	// Logger receives a debug line per refusal. Defaults to discarding.
	Logger *slog.Logger
}

type signerKey struct{}

// NewAuthorizedFetch returns middleware requiring a verified HTTP
// signature on ActivityPub GETs and HEADs (those whose Accept asks for
// application/activity+json or application/ld+json), as Mastodon's
// authorized fetch (secure mode) does; other requests, and those Allow
// admits, pass as they are. A refusal is 401 (400 for a malformed
// signature). The verified signature is in the request's context for next:
// SignerFromContext.
func NewAuthorizedFetch(keys sig.KeyResolver, next http.Handler, cfg *AuthorizedFetchConfig) (http.Handler, error) {
	if keys == nil || next == nil {
		return nil, errors.New("inbox: NewAuthorizedFetch needs a KeyResolver and a handler")
	}
	var c AuthorizedFetchConfig
	if cfg != nil {
		c = *cfg
	}
	v, err := newVerifier(keys, &c.Verifier)
	if err != nil {
		return nil, err
	}
	var rf KeyRefetcher
	if r, ok := keys.(KeyRefetcher); ok && !c.DisableKeyRefetch {
		rf = r
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.Method != http.MethodGet && r.Method != http.MethodHead) || !WantsActivityPub(r) || (c.Allow != nil && c.Allow(r)) {
			next.ServeHTTP(w, r)
			return
		}
		res, ids, err := verifyWith(v, r, nil)
		if err != nil && errors.Is(err, sig.ErrBadSignature) && rf != nil && refetched(r.Context(), rf, ids) {
			res, _, err = verifyWith(v, r, nil)
		}
		if err != nil {
			re := signatureRefusal(err)
			log.DebugContext(r.Context(), "inbox: authorized fetch refused", "reason", re.Reason.String(), "err", err)
			acceptSignature(w, v, r, re.Reason)
			http.Error(w, re.Reason.String(), re.Reason.Status())
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), signerKey{}, res)))
	}), nil
}

// SignerFromContext returns the signature NewAuthorizedFetch verified, to
// check the fetching server against the application's blocks.
func SignerFromContext(ctx context.Context) (*sig.Result, bool) {
	res, ok := ctx.Value(signerKey{}).(*sig.Result)
	return res, ok
}

// WantsActivityPub reports whether r asks for ActivityStreams JSON: its
// Accept names application/activity+json or application/ld+json (with any
// profile, as Mastodon reads it) with a non-zero q. Serve the actor
// document then, and the HTML profile otherwise: it is the one
// content-negotiation rule, and NewAuthorizedFetch guards exactly those
// GETs.
func WantsActivityPub(r *http.Request) bool {
	for _, line := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(line, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q == 0 {
				continue // "not acceptable"
			}
			if mt == "application/activity+json" || mt == "application/ld+json" {
				return true
			}
		}
	}
	return false
}
