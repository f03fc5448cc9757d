package sig

import (
	"crypto"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"time"
)

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
		return SignRFC9421(req, s.key, o)
	}
	return fmt.Errorf("sig: unknown scheme %d", scheme)
}

// SignRFC9421 signs req under RFC 9421 with the signer's key and opts. An
// empty opts.KeyID is the signer's, and a zero opts.Created is the clock's
// current second. Unlike Sign, it sets no header besides the signature
// fields.
func (s *Signer) SignRFC9421(req *http.Request, opts *SignOpts) error {
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
	return SignRFC9421(req, s.key, &o)
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
