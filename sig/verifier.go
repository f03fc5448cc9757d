package sig

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Key is a resolved verification key.
type Key struct {
	// Public is an *rsa.PublicKey, ed25519.PublicKey, *ecdsa.PublicKey
	// (P-256) or, for hmac-sha256, a []byte secret.
	Public crypto.PublicKey
	// Owner is the actor the key belongs to, reported in Result.
	Owner string
	// Alg optionally pins the RFC 9421 algorithm of the key; a signature
	// whose alg parameter disagrees is refused.
	Alg string
}

// KeyResolver supplies the key for a key ID, usually by fetching the actor
// document. Return an error wrapping ErrUnknownKey when there is no such
// key; other errors are reported wrapped with ErrUnknownKey as well.
type KeyResolver interface {
	ResolveKey(ctx context.Context, id KeyID) (*Key, error)
}

// KeyResolverFunc adapts a function to KeyResolver.
type KeyResolverFunc func(ctx context.Context, id KeyID) (*Key, error)

// ResolveKey calls f.
func (f KeyResolverFunc) ResolveKey(ctx context.Context, id KeyID) (*Key, error) { return f(ctx, id) }

// NonceStore records RFC 9421 nonces to refuse replays. Reserve returns
// false when (id, nonce) was already reserved and has not yet reached its
// until time.
type NonceStore interface {
	Reserve(ctx context.Context, id KeyID, nonce string, until time.Time) (fresh bool, err error)
}

// Clock window defaults: Mastodon's.
const (
	// MaxAgeDefault is how old a signature's created time (or Date) may be.
	MaxAgeDefault = 12 * time.Hour
	// SkewDefault is the clock skew tolerated: created up to this far in
	// the future, and this long past expires.
	SkewDefault = time.Hour
	// URLSchemeDefault is the scheme an inbound request's @target-uri and
	// @scheme are built with; fediverse servers are HTTPS, usually behind a
	// TLS-terminating proxy.
	URLSchemeDefault = "https"
)

// VerifierConfig configures a Verifier. The zero value is usable.
type VerifierConfig struct {
	// Now is the clock. Defaults to time.Now. A MemoryNonceStore handed
	// to the Verifier (Nonces) with no Now of its own takes it.
	Now func() time.Time
	// MaxAge bounds how old a signature may be. Defaults to MaxAgeDefault.
	MaxAge time.Duration
	// Skew is the tolerated clock skew. Defaults to SkewDefault.
	Skew time.Duration
	// Nonces, when set, makes an RFC 9421 nonce mandatory and refuses its
	// reuse (ErrReplay). Defaults to nil: no replay protection.
	Nonces NonceStore
	// Label selects the RFC 9421 signature by label. Defaults to any.
	Label string
	// Tag selects the RFC 9421 signature by tag. Defaults to any.
	Tag string
	// URLScheme is the scheme for @scheme and @target-uri of requests that
	// do not carry one. A signature that is bad with it and verifies with
	// the other scheme fails with a *SchemeMismatchError. Defaults to
	// URLSchemeDefault.
	URLScheme string
	// MaxBodyBytes bounds the body read to check a digest. Defaults to
	// MaxBodyBytesDefault.
	MaxBodyBytes int64
	// TracerProvider receives a sig.verify span per verification (package
	// doc, "Telemetry"). Defaults to OpenTelemetry's global provider, a
	// no-op until the application installs one.
	TracerProvider trace.TracerProvider
	// MeterProvider receives the fedkit.sig.verifications counter.
	// Defaults to OpenTelemetry's global provider, a no-op until the
	// application installs one.
	MeterProvider metric.MeterProvider
}

// Result reports a verified signature.
type Result struct {
	KeyID KeyID // the signature's key ID
	// Owner is the resolved Key's Owner: the actor to compare with the
	// activity's actor, since a valid signature alone says nothing of who
	// may send what.
	Owner   string
	Scheme  Scheme    // the scheme that verified
	Label   string    // RFC 9421 only
	Created time.Time // created parameter, or the signed Date
	Nonce   string    // RFC 9421 only
}

// Verifier verifies inbound signed requests. It is safe for concurrent
// use.
type Verifier struct {
	keys KeyResolver
	cfg  VerifierConfig
	tel  *verifyTelemetry
}

// NewVerifier returns a Verifier resolving keys through keys.
func NewVerifier(keys KeyResolver, cfg *VerifierConfig) (*Verifier, error) {
	if keys == nil {
		return nil, errors.New("sig: nil KeyResolver")
	}
	v := &Verifier{keys: keys}
	if cfg != nil {
		v.cfg = *cfg
	}
	c := &v.cfg
	if c.Now == nil {
		c.Now = time.Now
	} else if m, ok := c.Nonces.(*MemoryNonceStore); ok && m != nil {
		m.clock.Adopt(c.Now)
	}
	if c.MaxAge == 0 {
		c.MaxAge = MaxAgeDefault
	}
	if c.Skew == 0 {
		c.Skew = SkewDefault
	}
	if c.URLScheme == "" {
		c.URLScheme = URLSchemeDefault
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = MaxBodyBytesDefault
	}
	if c.MaxAge < 0 || c.Skew < 0 || c.MaxBodyBytes < 0 {
		return nil, errors.New("sig: negative MaxAge, Skew or MaxBodyBytes")
	}
	if c.URLScheme != "http" && c.URLScheme != "https" {
		return nil, fmt.Errorf("sig: URLScheme %q", c.URLScheme)
	}
	v.instrument()
	return v, nil
}

// verify is Verify without its telemetry.
func (v *Verifier) verify(req *http.Request) (*Result, error) {
	if len(req.Header["Signature-Input"]) > 0 {
		return v.verifyRFC9421(req)
	}
	if _, ok := cavageHeader(req.Header); ok {
		return v.verifyCavage(req)
	}
	return nil, ErrNoSignature
}

func (v *Verifier) verifyCavage(req *http.Request) (*Result, error) {
	now := v.cfg.Now() // once: both time checks see the same clock
	if n := len(req.Header["Signature"]); n > 1 {
		// Header.Get would take the first line silently, while a proxy
		// joining the lines sees another value: refuse the ambiguity.
		return nil, fmt.Errorf("%w: %d Signature fields", ErrMalformed, n)
	}
	raw, _ := cavageHeader(req.Header)
	cs, err := ParseCavageSignature(raw)
	if err != nil {
		return nil, err
	}
	id, err := ParseKeyID(cs.KeyID)
	if err != nil {
		return nil, err
	}
	covers := func(h string) bool {
		for _, x := range cs.Headers {
			if x == h {
				return true
			}
		}
		return false
	}
	switch {
	case !covers("(request-target)"):
		return nil, fmt.Errorf("%w: (request-target) not signed", ErrMissingComponent)
	case !covers("host"):
		return nil, fmt.Errorf("%w: host not signed", ErrMissingComponent)
	case !covers("date") && !covers("(created)"):
		return nil, fmt.Errorf("%w: neither date nor (created) signed", ErrMissingComponent)
	case hasBody(req) && !covers("digest"):
		return nil, fmt.Errorf("%w: digest not signed", ErrMissingComponent)
	}
	switch cs.Algorithm {
	case "", CavageRSASHA256, CavageRSASHA512, CavageHS2019, CavageEd25519, CavageEd25519SHA512, "ecdsa-sha256":
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnsupportedAlgorithm, cs.Algorithm)
	}
	// A created parameter counts only when "(created)" signs it; anyone
	// relaying the request can change it otherwise.
	created := time.Time{}
	if covers("(created)") {
		created = cs.Created
	}
	if created.IsZero() {
		d, err := parseHTTPDate(headerGet(req.Header, "Date"))
		if err != nil {
			return nil, fmt.Errorf("%w: Date: %v", ErrMalformed, err)
		}
		created = d
	}
	if err := v.checkTime(now, created, cs.Expires); err != nil {
		return nil, err
	}
	// A signed Date must itself be in the window even when (created) is
	// what the window was checked on.
	if covers("date") && covers("(created)") {
		d, err := parseHTTPDate(headerGet(req.Header, "Date"))
		if err != nil {
			return nil, fmt.Errorf("%w: Date: %v", ErrMalformed, err)
		}
		if err := v.checkTime(now, d, time.Time{}); err != nil {
			return nil, err
		}
	}
	key, err := v.resolve(req.Context(), id)
	if err != nil {
		return nil, err
	}
	if err := checkPublicKey(key.Public); err != nil {
		return nil, err
	}
	if err := v.cavageCheck(req, cs, key.Public); err != nil {
		return nil, err
	}
	if covers("digest") {
		body, err := readBody(req, v.cfg.MaxBodyBytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrDigestMismatch, err)
		}
		if err := VerifyDigest(req.Header["Digest"], body); err != nil {
			return nil, err
		}
	}
	return &Result{KeyID: id, Owner: key.Owner, Scheme: SchemeCavage, Created: created}, nil
}

// cavageCheck verifies the signature itself, building the signing string
// in a pooled buffer.
func (v *Verifier) cavageCheck(req *http.Request, cs *CavageSignature, pub crypto.PublicKey) error {
	var m message
	m.initRequest(req, v.cfg.URLScheme)
	buf := getBuf()
	defer putBuf(buf)
	str, err := appendCavageSigningString((*buf)[:0], &m, cs, true)
	if err != nil {
		return err
	}
	*buf = str
	err = cavageVerify(cs.Algorithm, pub, str, cs.Signature)
	if errors.Is(err, ErrBadSignature) && m.uri.RawQuery != "" {
		// Older Mastodon signed (request-target) without the query.
		if str, err2 := appendCavageSigningString((*buf)[:0], &m, cs, false); err2 == nil {
			*buf = str
			err = cavageVerify(cs.Algorithm, pub, str, cs.Signature)
		}
	}
	return err
}

func (v *Verifier) verifyRFC9421(req *http.Request) (*Result, error) {
	now := v.cfg.Now() // once: both time checks see the same clock
	all, err := ParseRFC9421Signatures(req.Header)
	if err != nil {
		return nil, err
	}
	var s *RFC9421Signature
	for _, c := range all {
		if (v.cfg.Label == "" || c.Label == v.cfg.Label) && (v.cfg.Tag == "" || c.Tag == v.cfg.Tag) {
			s = c
			break
		}
	}
	if s == nil {
		return nil, fmt.Errorf("%w: none with label %q and tag %q", ErrNoSignature, v.cfg.Label, v.cfg.Tag)
	}
	if s.KeyID == "" {
		return nil, fmt.Errorf("%w: no keyid", ErrMissingComponent)
	}
	id, err := ParseKeyID(s.KeyID)
	if err != nil {
		return nil, err
	}
	switch {
	case !s.Covers("@method"):
		return nil, fmt.Errorf("%w: @method not covered", ErrMissingComponent)
	case !s.Covers("@target-uri") && !(s.Covers("@request-target") || s.Covers("@path")):
		return nil, fmt.Errorf("%w: @target-uri not covered", ErrMissingComponent)
	case !s.Covers("@target-uri") && !s.Covers("@authority") && !s.Covers("host"):
		return nil, fmt.Errorf("%w: @authority not covered", ErrMissingComponent)
	case s.Created.IsZero() && !s.Covers("date"):
		return nil, fmt.Errorf("%w: neither created nor date", ErrMissingComponent)
	case hasBody(req) && !s.Covers("content-digest"):
		return nil, fmt.Errorf("%w: content-digest not covered", ErrMissingComponent)
	case v.cfg.Nonces != nil && s.Nonce == "":
		return nil, fmt.Errorf("%w: no nonce", ErrMissingComponent)
	}
	if s.Alg != "" {
		switch s.Alg {
		case AlgRSAv15SHA256, AlgRSAPSSSHA512, AlgECDSAP256SHA256, AlgEd25519, AlgHMACSHA256:
		default:
			return nil, fmt.Errorf("%w: %q", ErrUnsupportedAlgorithm, s.Alg)
		}
	}
	created := s.Created
	if s.Covers("date") {
		d, err := parseHTTPDate(headerGet(req.Header, "Date"))
		if err != nil {
			return nil, fmt.Errorf("%w: Date: %v", ErrMalformed, err)
		}
		if created.IsZero() {
			created = d
		} else if err := v.checkTime(now, d, time.Time{}); err != nil {
			return nil, err
		}
	}
	if err := v.checkTime(now, created, s.Expires); err != nil {
		return nil, err
	}
	var m message
	m.initRequest(req, v.cfg.URLScheme)
	if err := pathCoversQuery(&m, s); err != nil {
		return nil, err
	}
	key, err := v.resolve(req.Context(), id)
	if err != nil {
		return nil, err
	}
	if err := verifyRFC9421(&m, s, key.Public, key.Alg); err != nil {
		return nil, v.explainScheme(err, req, s, key)
	}
	if s.Covers("content-digest") {
		body, err := readBody(req, v.cfg.MaxBodyBytes)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrDigestMismatch, err)
		}
		if err := VerifyContentDigest(req.Header["Content-Digest"], body); err != nil {
			return nil, err
		}
	}
	if v.cfg.Nonces != nil {
		until := created.Add(v.cfg.MaxAge + v.cfg.Skew)
		if !s.Expires.IsZero() {
			until = s.Expires.Add(v.cfg.Skew)
		}
		fresh, err := v.cfg.Nonces.Reserve(req.Context(), id, s.Nonce, until)
		if err != nil {
			return nil, fmt.Errorf("sig: nonce store: %w", err)
		}
		if !fresh {
			return nil, ErrReplay
		}
	}
	return &Result{KeyID: id, Owner: key.Owner, Scheme: SchemeRFC9421, Label: s.Label, Created: created, Nonce: s.Nonce}, nil
}

// pathCoversQuery refuses a signature where @path stands in for the target
// and leaves the request's query unsigned: @path excludes the query, so
// without @query, or @query-param for every parameter, a GET signed for
// ?page=1 would verify as ?page=999&admin=true.
func pathCoversQuery(m *message, s *RFC9421Signature) error {
	if m.uri.RawQuery == "" || s.Covers("@target-uri") || s.Covers("@request-target") || s.Covers("@query") {
		return nil
	}
	if err := m.indexQuery(); err != nil {
		// Not form-encoded: no set of @query-param can cover it.
		return fmt.Errorf("%w: @path without @query on a request with a query", ErrMissingComponent)
	}
	for name := range m.query {
		covered := false
		for i := range s.cov.comps {
			c := &s.cov.comps[i]
			if c.name != "@query-param" || c.params == nil || hasParam(c.params, "req") {
				continue
			}
			if v, _ := c.params.Get("name"); v == name {
				covered = true
				break
			}
		}
		if !covered {
			return fmt.Errorf("%w: @path without @query or @query-param for every query parameter", ErrMissingComponent)
		}
	}
	return nil
}

// explainScheme turns the ErrBadSignature of a signature over the scheme
// into a *SchemeMismatchError when it verifies with the other scheme, so an
// operator behind a TLS proxy learns which setting to change. It costs one
// more check only on a failure that signed the scheme.
func (v *Verifier) explainScheme(err error, req *http.Request, s *RFC9421Signature, key *Key) error {
	if !errors.Is(err, ErrBadSignature) || !(s.Covers("@target-uri") || s.Covers("@scheme")) {
		return err
	}
	other := "https"
	if v.cfg.URLScheme == "https" {
		other = "http"
	}
	var m message
	m.initRequest(req, other)
	if verifyRFC9421(&m, s, key.Public, key.Alg) != nil {
		return err
	}
	return &SchemeMismatchError{Signed: other, Configured: v.cfg.URLScheme}
}

// checkTime applies the window: now-MaxAge <= created <= now+Skew, and
// now <= expires+Skew.
func (v *Verifier) checkTime(now, created, expires time.Time) error {
	switch {
	case created.After(now.Add(v.cfg.Skew)):
		return fmt.Errorf("%w: created in the future", ErrExpired)
	case created.Before(now.Add(-v.cfg.MaxAge)):
		return fmt.Errorf("%w: created too long ago", ErrExpired)
	case !expires.IsZero() && now.After(expires.Add(v.cfg.Skew)):
		return fmt.Errorf("%w: past expires", ErrExpired)
	case !expires.IsZero() && expires.Before(created):
		return fmt.Errorf("%w: expires before created", ErrExpired)
	}
	return nil
}

func (v *Verifier) resolve(ctx context.Context, id KeyID) (*Key, error) {
	k, err := v.keys.ResolveKey(ctx, id)
	if err != nil {
		if errors.Is(err, ErrUnknownKey) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrUnknownKey, err)
	}
	if k == nil || k.Public == nil {
		return nil, fmt.Errorf("%w: resolver returned no key", ErrUnknownKey)
	}
	return k, nil
}

type resultKey struct{}

// Middleware verifies each request before next sees it. A failure is
// answered 401 (400 for a malformed signature) with a short fixed text and
// an Accept-Signature field saying what v accepts (AcceptSignature);
// a success passes the Result in the request context, read with
// ResultFromContext. The body, read for the digest check, is put back.
func (v *Verifier) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, err := v.Verify(r)
		if err != nil {
			status := http.StatusUnauthorized
			if errors.Is(err, ErrMalformed) {
				status = http.StatusBadRequest
			}
			a := v.AcceptSignature(r)
			w.Header().Set(AcceptSignatureHeader, a.String())
			http.Error(w, errorText(err), status)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), resultKey{}, res)))
	})
}

// ResultFromContext returns the Result Middleware stored.
func ResultFromContext(ctx context.Context) (*Result, bool) {
	r, ok := ctx.Value(resultKey{}).(*Result)
	return r, ok
}

// errorText maps an error to a fixed message, never echoing input.
func errorText(err error) string {
	for _, e := range []error{ErrNoSignature, ErrExpired, ErrUnknownKey, ErrDigestMismatch, ErrBadSignature,
		ErrUnsupportedAlgorithm, ErrMissingComponent, ErrMalformed, ErrReplay, ErrWeakKey, ErrUnsupportedKey} {
		if errors.Is(err, e) {
			return strings.TrimPrefix(e.Error(), "sig: ")
		}
	}
	return "signature verification failed"
}

// bufPool holds buffers for signature bases and signing strings, which a
// verification needs only until the signature is checked.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= 64<<10 { // let the odd huge one go
		*b = (*b)[:0]
		bufPool.Put(b)
	}
}
