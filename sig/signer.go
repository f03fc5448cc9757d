package sig

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Scheme is an HTTP signature scheme.
type Scheme uint8

const (
	// SchemeCavage is draft-cavage-http-signatures-12, as Mastodon signs.
	SchemeCavage Scheme = iota + 1
	// SchemeRFC9421 is RFC 9421 HTTP Message Signatures.
	SchemeRFC9421
)

// String returns "cavage", "rfc9421" or "unknown".
func (s Scheme) String() string {
	switch s {
	case SchemeCavage:
		return "cavage"
	case SchemeRFC9421:
		return "rfc9421"
	}
	return "unknown"
}

// MarshalText implements encoding.TextMarshaler.
func (s Scheme) MarshalText() ([]byte, error) {
	if s != SchemeCavage && s != SchemeRFC9421 {
		return nil, fmt.Errorf("sig: unknown scheme %d", s)
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Scheme) UnmarshalText(b []byte) error {
	switch string(b) {
	case "cavage":
		*s = SchemeCavage
	case "rfc9421":
		*s = SchemeRFC9421
	default:
		return fmt.Errorf("sig: unknown scheme %q", b)
	}
	return nil
}

// MaxBodyBytesDefault bounds the body a Signer or Verifier reads to
// compute a digest.
const MaxBodyBytesDefault = 16 << 20

// SignerConfig configures a Signer. The zero value is usable.
type SignerConfig struct {
	// Now is the clock, read once per signed request. Defaults to time.Now.
	Now func() time.Time
	// Nonce returns an RFC 9421 nonce per request. Defaults to none: no
	// nonce parameter, as Mastodon signs. RandomNonce is one to use.
	Nonce func() (string, error)
	// Expires is the RFC 9421 signature lifetime written as expires.
	// Defaults to 0: no expires parameter.
	Expires time.Duration
	// Label is the RFC 9421 label. Defaults to LabelDefault.
	Label string
	// MaxBodyBytes bounds the body read to digest it. Defaults to
	// MaxBodyBytesDefault.
	MaxBodyBytes int64
}

// Signer signs outgoing requests with one key. It is safe for concurrent
// use and holds no lock while signing.
type Signer struct {
	key   crypto.Signer
	keyID KeyID
	cfg   SignerConfig
}

// NewSigner returns a Signer for key (RSA of at least MinRSABits, Ed25519
// or ECDSA P-256) published under keyID.
func NewSigner(key crypto.Signer, keyID string, cfg *SignerConfig) (*Signer, error) {
	if key == nil {
		return nil, fmt.Errorf("%w: nil key", ErrUnsupportedKey)
	}
	k, err := privateSigner(key)
	if err != nil {
		return nil, err
	}
	if err := checkSigningKey(k); err != nil {
		return nil, err
	}
	id, err := ParseKeyID(keyID)
	if err != nil {
		return nil, err
	}
	s := &Signer{key: k, keyID: id}
	if cfg != nil {
		s.cfg = *cfg
	}
	if s.cfg.Now == nil {
		s.cfg.Now = time.Now
	}
	if s.cfg.Label == "" {
		s.cfg.Label = LabelDefault
	}
	if s.cfg.MaxBodyBytes <= 0 {
		s.cfg.MaxBodyBytes = MaxBodyBytesDefault
	}
	if s.cfg.Expires < 0 {
		return nil, fmt.Errorf("sig: negative Expires %v", s.cfg.Expires)
	}
	return s, nil
}

// KeyID returns the key ID the signer signs under.
func (s *Signer) KeyID() KeyID { return s.keyID }

// Public returns the public half of the signing key.
func (s *Signer) Public() crypto.PublicKey { return s.key.Public() }

// Sign signs req under scheme with the current time, as Mastodon does:
//
//   - cavage: Date and, for a POST, PUT or PATCH or any body, Digest
//     (SHA-256) are set; the signature covers "(request-target) host date"
//     plus "digest"; algorithm is rsa-sha256, ed25519 or hs2019 (ECDSA).
//   - RFC 9421: Date and, with a body, Content-Digest (sha-256) are set;
//     the signature covers "@method" "@target-uri" "@authority" "date" plus
//     "content-digest", with keyid, alg, created and the configured nonce
//     and expires.
//
// A body is read (through GetBody when set) and put back, with GetBody
// set so the request can be re-sent. Earlier Signature and
// Signature-Input fields are replaced, so a request can be re-signed for
// a redirect hop or under the other scheme.
func (s *Signer) Sign(req *http.Request, scheme Scheme) error {
	body, err := readBody(req, s.cfg.MaxBodyBytes)
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Date", now.UTC().Format(http.TimeFormat))
	req.Header.Del("Signature")
	req.Header.Del("Signature-Input")
	withBody := len(body) > 0 || req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch
	switch scheme {
	case SchemeCavage:
		headers := []string{"(request-target)", "host", "date"}
		if withBody {
			req.Header.Set("Digest", Digest(body))
			headers = append(headers, "digest")
		}
		return signCavage(req, s.key, s.keyID.String(), headers)
	case SchemeRFC9421:
		comps := []string{"@method", "@target-uri", "@authority", "date"}
		if withBody {
			req.Header.Set("Content-Digest", ContentDigest(body))
			comps = append(comps, "content-digest")
		}
		o := &SignOpts{Label: s.cfg.Label, Components: comps, KeyID: s.keyID.String(), Created: now}
		o.Alg, _ = algForKey(s.key)
		if s.cfg.Expires > 0 {
			o.Expires = now.Add(s.cfg.Expires)
		}
		if s.cfg.Nonce != nil {
			if o.Nonce, err = s.cfg.Nonce(); err != nil {
				return fmt.Errorf("sig: nonce: %w", err)
			}
		}
		return Sign9421(req, s.key, o)
	}
	return fmt.Errorf("sig: unknown scheme %d", scheme)
}

// Sign9421 signs req under RFC 9421 with the signer's key and opts. An
// empty opts.KeyID is the signer's, and a zero opts.Created is the clock's
// current second. Unlike Sign, it sets no header besides the signature
// fields.
func (s *Signer) Sign9421(req *http.Request, opts *SignOpts) error {
	o := SignOpts{}
	if opts != nil {
		o = *opts
	}
	if o.KeyID == "" {
		o.KeyID = s.keyID.String()
	}
	if o.Created.IsZero() {
		o.Created = s.cfg.Now().Truncate(time.Second)
	}
	return Sign9421(req, s.key, &o)
}

// SignCavage signs req with draft-cavage-12 over the given lower-case
// header names (which may include "(request-target)", "(created)" and
// "(expires)"), setting the Signature header. The covered headers must
// already be set.
func SignCavage(req *http.Request, key crypto.Signer, keyID string, headers []string) error {
	if err := checkSigningKey(key); err != nil {
		return err
	}
	return signCavage(req, key, keyID, headers)
}

func signCavage(req *http.Request, key crypto.Signer, keyID string, headers []string) error {
	alg, err := cavageAlgFor(key)
	if err != nil {
		return err
	}
	cs := &CavageSignature{KeyID: keyID, Algorithm: alg, Headers: headers}
	str, err := cavageSigningString(requestMessage(req, ""), cs, true)
	if err != nil {
		return err
	}
	if cs.Signature, err = cavageSign(key, str); err != nil {
		return err
	}
	req.Header.Set("Signature", cs.String())
	return nil
}

// RandomNonce returns 24 random bytes as unpadded base64url (32
// characters), the Directory's nonce form.
func RandomNonce() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// maxBodyPrealloc is the most of a declared Content-Length allocated
// before the bytes arrive; a larger body grows as it is read, so a sender
// that declares much and sends little costs only what it sent.
const maxBodyPrealloc = 1 << 20

// readBody reads req's body for digesting and leaves it re-readable.
func readBody(req *http.Request, limit int64) ([]byte, error) {
	var rc io.ReadCloser
	switch {
	case req.GetBody != nil:
		b, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("sig: body: %w", err)
		}
		rc = b
	case req.Body != nil && req.Body != http.NoBody:
		rc = req.Body
	default:
		return nil, nil
	}
	defer rc.Close()
	var body []byte
	if n := req.ContentLength; n > 0 && n <= limit && n <= maxBodyPrealloc {
		// Read exactly the declared length without regrowing, then make
		// sure nothing follows.
		body = make([]byte, n, n+1)
		if _, err := io.ReadFull(rc, body); err != nil {
			return nil, fmt.Errorf("sig: body: %w", err)
		}
	}
	var one [1]byte
	if k, err := rc.Read(one[:]); k > 0 || (err != nil && err != io.EOF) || len(body) == 0 {
		// More than declared, an unknown length, or a read error: read on.
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("sig: body: %w", err)
		}
		body = append(body, one[:k]...)
		rest, err := io.ReadAll(io.LimitReader(rc, limit+1-int64(len(body))))
		if err != nil {
			return nil, fmt.Errorf("sig: body: %w", err)
		}
		body = append(body, rest...)
	}
	if int64(len(body)) > limit {
		return nil, fmt.Errorf("sig: body over %d bytes", limit)
	}
	if n := req.ContentLength; n > 0 && int64(len(body)) < n {
		// As io.ReadFull refuses it when the length is preallocated.
		return nil, fmt.Errorf("sig: body of %d bytes, Content-Length %d", len(body), n)
	}
	req.Body = memoryBody(body)
	req.GetBody = func() (io.ReadCloser, error) { return memoryBody(body), nil }
	req.ContentLength = int64(len(body))
	return body, nil
}

// memoryBody is a body read into memory, in the form net/http knows is in
// memory (a bytes.Reader behind io.NopCloser): for any other reader it
// writes the headers and the body in two writes, two TCP segments the
// server must read apart, on every signed request.
func memoryBody(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
