package sig

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// draft-cavage-12 algorithm names.
const (
	CavageRSASHA256 = "rsa-sha256"
	CavageRSASHA512 = "rsa-sha512"
	CavageEd25519   = "ed25519"
	CavageHS2019    = "hs2019"
	// CavageEd25519SHA512 is the name Misskey (and the Joyent and PeerTube
	// http-signature libraries it follows) writes for Ed25519 keys. It is
	// plain Ed25519 over the signing string: the SHA-512 is Ed25519's own,
	// not a pre-hash, so it verifies exactly as CavageEd25519. We accept
	// it and never write it.
	CavageEd25519SHA512 = "ed25519-sha512"
)

// Bounds on a hostile cavage Signature header.
const (
	maxCavageHeader  = 16 << 10
	maxCavageHeaders = 64
)

// CavageSignature is a parsed draft-cavage-12 Signature (or Authorization:
// Signature) header.
type CavageSignature struct {
	KeyID     string
	Algorithm string // as written, lower case; may be empty
	// Headers are the covered header names, lower case, in signed order.
	// Absent, it defaults to ["date"], as Mastodon and Appendix C read it.
	Headers   []string
	Signature []byte
	// Created and Expires are zero when absent.
	Created, Expires time.Time
}

// ParseCavageSignature parses a cavage Signature header value (with or
// without the "Signature " prefix of the Authorization form). Parameter
// names are case-sensitive as in the draft; a duplicate is refused.
func ParseCavageSignature(v string) (*CavageSignature, error) {
	if len(v) > maxCavageHeader {
		return nil, fmt.Errorf("%w: Signature header of %d bytes", ErrMalformed, len(v))
	}
	if rest, ok := strings.CutPrefix(v, "Signature "); ok {
		v = rest
	}
	var p cavageParams
	s := strings.TrimSpace(v)
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			return nil, fmt.Errorf("%w: Signature parameter without '='", ErrMalformed)
		}
		name := strings.TrimSpace(s[:eq])
		s = strings.TrimLeft(s[eq+1:], " \t")
		var val string
		if strings.HasPrefix(s, `"`) {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("%w: unterminated quoted string", ErrMalformed)
			}
			val, s = s[1:1+end], s[2+end:]
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			val, s = strings.TrimSpace(s[:end]), s[end:]
		}
		if !p.set(name, val) {
			return nil, fmt.Errorf("%w: Signature parameter %q repeated", ErrMalformed, name)
		}
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			break
		}
		if s[0] != ',' {
			return nil, fmt.Errorf("%w: expected ',' in Signature", ErrMalformed)
		}
		s = strings.TrimLeft(s[1:], " \t")
	}
	cs := &CavageSignature{KeyID: p.v[pKeyID], Algorithm: strings.ToLower(p.v[pAlgorithm])}
	if cs.KeyID == "" {
		return nil, fmt.Errorf("%w: Signature without keyId", ErrMalformed)
	}
	raw, err := base64.StdEncoding.DecodeString(p.v[pSignature])
	if err != nil || len(raw) == 0 || len(raw) > maxSignatureSize {
		return nil, fmt.Errorf("%w: Signature value is not base64", ErrMalformed)
	}
	cs.Signature = raw
	if p.seen&(1<<pHeaders) != 0 {
		cs.Headers = strings.Fields(strings.ToLower(p.v[pHeaders]))
		if len(cs.Headers) == 0 {
			return nil, fmt.Errorf("%w: empty headers list", ErrMalformed)
		}
	} else {
		cs.Headers = []string{"date"}
	}
	if len(cs.Headers) > maxCavageHeaders {
		return nil, fmt.Errorf("%w: %d signed headers", ErrMalformed, len(cs.Headers))
	}
	for _, f := range []struct {
		i   int
		dst *time.Time
	}{{pCreated, &cs.Created}, {pExpires, &cs.Expires}} {
		if p.seen&(1<<f.i) != 0 {
			n, err := strconv.ParseInt(p.v[f.i], 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: created or expires is not an integer", ErrMalformed)
			}
			*f.dst = time.Unix(n, 0)
		}
	}
	return cs, nil
}

// cavageParams holds the parameters we read; others are ignored, but a
// repeated one is refused all the same.
type cavageParams struct {
	v     [6]string
	seen  uint8
	other []string
}

const (
	pKeyID = iota
	pAlgorithm
	pHeaders
	pSignature
	pCreated
	pExpires
)

// set records a parameter and reports false for a repeat.
func (p *cavageParams) set(name, val string) bool {
	i := -1
	switch name {
	case "keyId":
		i = pKeyID
	case "algorithm":
		i = pAlgorithm
	case "headers":
		i = pHeaders
	case "signature":
		i = pSignature
	case "created":
		i = pCreated
	case "expires":
		i = pExpires
	}
	if i < 0 {
		if slices.Contains(p.other, name) || len(p.other) >= maxCavageHeaders {
			return false
		}
		p.other = append(p.other, name)
		return true
	}
	if p.seen&(1<<i) != 0 {
		return false
	}
	p.seen |= 1 << i
	p.v[i] = val
	return true
}

// String formats the signature as a Signature header value, in the
// keyId, algorithm, [created, expires,] headers, signature order Mastodon
// writes.
func (cs *CavageSignature) String() string {
	// One buffer sized up front: this runs once per signed request. 104
	// is the fixed text with both times, each up to 20 digits.
	n := len(cs.KeyID) + len(cs.Algorithm) + base64.StdEncoding.EncodedLen(len(cs.Signature)) + 104
	for _, h := range cs.Headers {
		n += len(h) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `keyId="`...)
	b = append(b, cs.KeyID...)
	b = append(b, '"')
	if cs.Algorithm != "" {
		b = append(b, `,algorithm="`...)
		b = append(b, cs.Algorithm...)
		b = append(b, '"')
	}
	if !cs.Created.IsZero() {
		b = append(b, ",created="...)
		b = strconv.AppendInt(b, cs.Created.Unix(), 10)
	}
	if !cs.Expires.IsZero() {
		b = append(b, ",expires="...)
		b = strconv.AppendInt(b, cs.Expires.Unix(), 10)
	}
	b = append(b, `,headers="`...)
	for i, h := range cs.Headers {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, h...)
	}
	b = append(b, `",signature="`...)
	b = base64.StdEncoding.AppendEncode(b, cs.Signature)
	b = append(b, '"')
	return string(b)
}

// cavageSigningString builds the string to sign (draft-cavage-12 2.3).
// withQuery false drops the query from (request-target), as older
// Mastodon signed it.
func cavageSigningString(m *message, cs *CavageSignature, withQuery bool) ([]byte, error) {
	return appendCavageSigningString(make([]byte, 0, 128+64*len(cs.Headers)), m, cs, withQuery)
}

// appendCavageSigningString builds the string to sign at the end of b.
func appendCavageSigningString(b []byte, m *message, cs *CavageSignature, withQuery bool) ([]byte, error) {
	for i, h := range cs.Headers {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, h...)
		b = append(b, ": "...)
		switch h {
		case "(request-target)":
			for j := 0; j < len(m.method); j++ {
				c := m.method[j]
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				b = append(b, c)
			}
			b = append(b, ' ')
			b = m.appendRequestTarget(b, withQuery)
		case "(created)":
			if cs.Created.IsZero() {
				return nil, fmt.Errorf("%w: (created) signed but absent", ErrMissingComponent)
			}
			b = strconv.AppendInt(b, cs.Created.Unix(), 10)
		case "(expires)":
			if cs.Expires.IsZero() {
				return nil, fmt.Errorf("%w: (expires) signed but absent", ErrMissingComponent)
			}
			b = strconv.AppendInt(b, cs.Expires.Unix(), 10)
		default:
			lines, ok := m.fieldLines(h)
			if !ok && h == "host" {
				lines, ok = []string{m.authority}, m.authority != ""
			}
			if !ok {
				return nil, fmt.Errorf("%w: signed header %q absent", ErrMissingComponent, h)
			}
			for j, l := range lines {
				if j > 0 {
					b = append(b, ", "...)
				}
				b = append(b, l...)
			}
		}
	}
	if bytes.IndexByte(b, '\r') >= 0 {
		return nil, fmt.Errorf("%w: header value with CR", ErrMalformed)
	}
	return b, nil
}

// cavageAlgFor returns the algorithm name we write for a key: rsa-sha256
// for RSA (never only hs2019, which some servers refuse), ed25519, and
// hs2019 for ECDSA P-256, which has no name of its own.
func cavageAlgFor(key any) (string, error) {
	switch key.(type) {
	case *rsa.PrivateKey:
		return CavageRSASHA256, nil
	case ed25519.PrivateKey:
		return CavageEd25519, nil
	case *ecdsa.PrivateKey:
		return CavageHS2019, nil
	}
	return "", fmt.Errorf("%w: %T for draft-cavage", ErrUnsupportedKey, key)
}

func cavageSign(key crypto.Signer, s []byte) ([]byte, error) {
	switch k := key.(type) {
	case *rsa.PrivateKey:
		h := sha256.Sum256(s)
		return rsa.SignPKCS1v15(nil, k, crypto.SHA256, h[:])
	case ed25519.PrivateKey:
		return ed25519.Sign(k, s), nil
	case *ecdsa.PrivateKey:
		h := sha256.Sum256(s)
		return ecdsa.SignASN1(rand.Reader, k, h[:])
	}
	return nil, fmt.Errorf("%w: %T", ErrUnsupportedKey, key)
}

// cavageVerify checks sig over s with pub under the named algorithm.
// hs2019 takes the algorithm from the key: RSA PKCS#1 v1.5 SHA-256 (what
// Mastodon and go-fed mean by it), then RSASSA-PSS SHA-512 (what the draft
// means by it), Ed25519, or ECDSA P-256 SHA-256.
func cavageVerify(alg string, pub crypto.PublicKey, msg, sig []byte) error {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		switch alg {
		case CavageRSASHA256, "":
			return rsaV15(k, crypto.SHA256, msg, sig)
		case CavageRSASHA512:
			return rsaV15(k, crypto.SHA512, msg, sig)
		case CavageHS2019:
			if rsaV15(k, crypto.SHA256, msg, sig) == nil {
				return nil
			}
			return verifyRaw(AlgRSAPSSSHA512, k, msg, sig)
		}
	case ed25519.PublicKey:
		if alg == CavageEd25519 || alg == CavageEd25519SHA512 || alg == CavageHS2019 || alg == "" {
			return verifyRaw(AlgEd25519, k, msg, sig)
		}
	case *ecdsa.PublicKey:
		if alg == CavageHS2019 || alg == "ecdsa-sha256" || alg == "" {
			h := sha256.Sum256(msg)
			if ecdsa.VerifyASN1(k, h[:], sig) {
				return nil
			}
			return verifyRaw(AlgECDSAP256SHA256, k, msg, sig)
		}
	default:
		return fmt.Errorf("%w: %T", ErrUnsupportedKey, pub)
	}
	return fmt.Errorf("%w: %q with a %T key", ErrUnsupportedAlgorithm, alg, pub)
}

func rsaV15(k *rsa.PublicKey, h crypto.Hash, msg, sig []byte) error {
	var d []byte
	if h == crypto.SHA512 {
		s := sha512.Sum512(msg)
		d = s[:]
	} else {
		s := sha256.Sum256(msg)
		d = s[:]
	}
	if rsa.VerifyPKCS1v15(k, h, d, sig) != nil {
		return ErrBadSignature
	}
	return nil
}

// cavageHeader returns the cavage signature on a request: the Signature
// header, else Authorization: Signature.
func cavageHeader(h http.Header) (string, bool) {
	if v := h.Get("Signature"); v != "" {
		return v, true
	}
	if v := h.Get("Authorization"); strings.HasPrefix(v, "Signature ") {
		return v, true
	}
	return "", false
}

// CavageSigningString returns the draft-cavage-12 string to sign for req
// and cs, with the query in (request-target).
func CavageSigningString(req *http.Request, cs *CavageSignature) (string, error) {
	b, err := cavageSigningString(requestMessage(req, ""), cs, true)
	return string(b), err
}

// VerifyCavage checks cs over req with pub, retrying without the query in
// (request-target) as older Mastodon signed. It checks neither time, nor
// required headers, nor Digest; Verifier does.
func VerifyCavage(req *http.Request, cs *CavageSignature, pub crypto.PublicKey) error {
	if err := checkPublicKey(pub); err != nil {
		return err
	}
	m := requestMessage(req, "")
	str, err := cavageSigningString(m, cs, true)
	if err != nil {
		return err
	}
	err = cavageVerify(cs.Algorithm, pub, str, cs.Signature)
	if errors.Is(err, ErrBadSignature) && m.uri.RawQuery != "" {
		str, _ = cavageSigningString(m, cs, false)
		err = cavageVerify(cs.Algorithm, pub, str, cs.Signature)
	}
	return err
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
