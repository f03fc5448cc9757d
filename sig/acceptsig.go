package sig

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
)

// AcceptSignatureHeader is the field a server uses to ask for a signature
// (RFC 9421 section 5.1), typically on a 401.
const AcceptSignatureHeader = "Accept-Signature"

// Bounds on a hostile Accept-Signature field: a sender reads it from a
// refusal and signs as it asks, so it must not make the sender do much.
const (
	maxAcceptMembers = 8
)

// AcceptSignature is one member of an Accept-Signature field: the
// signature a server asks for (RFC 9421 section 5.1).
type AcceptSignature struct {
	// Label is the label the signature is to carry.
	Label string
	// Components are the component identifiers to cover, in order, in
	// their serialised form (`"@method"`, `"example-dict";sf`), which
	// SignOpts.Components accepts.
	Components []string
	// Alg, when set, is the algorithm asked for.
	Alg string
	// KeyID, when set, is the key asked for.
	KeyID string
	// Tag, when set, is the tag asked for.
	Tag string
	// Created, Expires and Nonce say the parameter is asked for.
	Created, Expires, Nonce bool
}

// Covers reports whether a asks for the component called name (without
// parameters).
func (a *AcceptSignature) Covers(name string) bool {
	for _, c := range a.Components {
		if n, _, _ := strings.Cut(c, ";"); strings.Trim(n, `"`) == name {
			return true
		}
	}
	return false
}

// String serialises a as one dictionary member: label=(components);params.
func (a *AcceptSignature) String() string {
	var b strings.Builder
	b.WriteString(a.Label)
	b.WriteString("=(")
	b.WriteString(strings.Join(a.Components, " "))
	b.WriteByte(')')
	// Tokens and strings here come from us or from a parse, so the
	// serialisation cannot fail; strings are quoted through httpsfv.
	for _, p := range []struct{ name, v string }{{"keyid", a.KeyID}, {"alg", a.Alg}, {"tag", a.Tag}} {
		if p.v != "" {
			s, _ := httpsfv.Marshal(httpsfv.NewItem(p.v))
			b.WriteString(";" + p.name + "=" + s)
		}
	}
	for _, p := range []struct {
		name string
		on   bool
	}{{"created", a.Created}, {"expires", a.Expires}, {"nonce", a.Nonce}} {
		if p.on {
			b.WriteString(";" + p.name)
		}
	}
	return b.String()
}

// FormatAcceptSignature serialises members as an Accept-Signature value.
func FormatAcceptSignature(members ...AcceptSignature) string {
	parts := make([]string, len(members))
	for i := range members {
		parts[i] = members[i].String()
	}
	return strings.Join(parts, ", ")
}

// ParseAcceptSignature parses h's Accept-Signature field. It returns nil
// and no error when there is none, and an error wrapping ErrMalformed when
// the field is not a dictionary of inner lists of component identifiers,
// is over the bounds (16 KiB, 8 members, 64 components each), or a
// parameter has the wrong type. Unknown parameters are ignored.
func ParseAcceptSignature(h http.Header) ([]AcceptSignature, error) {
	lines := h.Values(AcceptSignatureHeader)
	if len(lines) == 0 {
		return nil, nil
	}
	if linesLen(lines) > maxSigHeader {
		return nil, fmt.Errorf("%w: Accept-Signature too large", ErrMalformed)
	}
	d, err := httpsfv.UnmarshalDictionary(lines)
	if err != nil {
		return nil, fmt.Errorf("%w: Accept-Signature: %v", ErrMalformed, err)
	}
	names := d.Names()
	if len(names) > maxAcceptMembers {
		return nil, fmt.Errorf("%w: Accept-Signature has %d members", ErrMalformed, len(names))
	}
	out := make([]AcceptSignature, 0, len(names))
	for _, label := range names {
		m, _ := d.Get(label)
		il, ok := m.(httpsfv.InnerList)
		if !ok {
			return nil, fmt.Errorf("%w: Accept-Signature member %q is not an inner list", ErrMalformed, label)
		}
		if len(il.Items) > maxComponents {
			return nil, fmt.Errorf("%w: Accept-Signature member %q has %d components", ErrMalformed, label, len(il.Items))
		}
		a := AcceptSignature{Label: label}
		for _, it := range il.Items {
			if _, ok := it.Value.(string); !ok {
				return nil, fmt.Errorf("%w: Accept-Signature component is not a string", ErrMalformed)
			}
			c, err := marshalItem(it)
			if err != nil {
				return nil, fmt.Errorf("%w: Accept-Signature component: %v", ErrMalformed, err)
			}
			a.Components = append(a.Components, c)
		}
		for _, name := range il.Params.Names() {
			v, _ := il.Params.Get(name)
			switch name {
			case "keyid", "alg", "tag":
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("%w: Accept-Signature %s is not a string", ErrMalformed, name)
				}
				switch name {
				case "keyid":
					a.KeyID = s
				case "alg":
					a.Alg = s
				default:
					a.Tag = s
				}
			case "created", "expires", "nonce":
				// RFC 9421 section 5.1 gives these as Boolean true; a
				// value other than false (an integer, as some write)
				// still means "include it".
				on := v != false
				switch name {
				case "created":
					a.Created = on
				case "expires":
					a.Expires = on
				default:
					a.Nonce = on
				}
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// acceptAlgFits reports whether key can sign with alg.
func acceptAlgFits(alg string, key any) bool {
	def, err := algForKey(key)
	if err != nil {
		return false
	}
	return alg == def || (alg == AlgRSAPSSSHA512 && def == AlgRSAv15SHA256)
}

// CanSignAccepted reports whether the signer can sign as a asks: a's
// algorithm, when named, fits the key, and a's key ID, when named, is the
// signer's. It does not look at the components, which may name fields the
// request lacks.
func (s *Signer) CanSignAccepted(a *AcceptSignature) bool {
	if a.Alg != "" && !acceptAlgFits(a.Alg, s.key) {
		return false
	}
	return a.KeyID == "" || a.KeyID == s.keyID.String()
}

// SignAccepted signs req under RFC 9421 as a asks: with its label, over
// its components in its order, with its algorithm (written as alg when a
// names one; else the key's, written as Sign writes it), tag, and the
// expires and nonce parameters when asked (expires at the configured
// lifetime or 5 minutes, the nonce from the configured source or
// RandomNonce). created is always written, since every fediverse verifier
// requires it. Date is set when "date" is asked for and Content-Digest
// (sha-256) when "content-digest" is. It fails with ErrUnsupportedAlgorithm
// when the algorithm does not fit the key, ErrUnknownKey when a names
// another key, and ErrMissingComponent when a asks for a field req lacks.
func (s *Signer) SignAccepted(req *http.Request, a *AcceptSignature) error {
	if a == nil || len(a.Components) == 0 {
		return fmt.Errorf("%w: Accept-Signature asks for no components", ErrMissingComponent)
	}
	if a.Alg != "" && !acceptAlgFits(a.Alg, s.key) {
		return mismatch(a.Alg, s.key)
	}
	if a.KeyID != "" && a.KeyID != s.keyID.String() {
		return fmt.Errorf("%w: Accept-Signature asks for key %q", ErrUnknownKey, a.KeyID)
	}
	now := s.cfg.Now()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Del("Signature")
	req.Header.Del("Signature-Input")
	if a.Covers("date") {
		req.Header.Set("Date", now.UTC().Format(http.TimeFormat))
	}
	if a.Covers("content-digest") {
		body, err := readBody(req, s.cfg.MaxBodyBytes)
		if err != nil {
			return err
		}
		req.Header.Set("Content-Digest", ContentDigest(body))
	}
	o := &SignOpts{Label: a.Label, Components: slices.Clone(a.Components), KeyID: s.keyID.String(),
		Created: now, Tag: a.Tag, Alg: a.Alg}
	if o.Alg == "" {
		o.Alg, _ = algForKey(s.key)
	}
	if a.Expires || s.cfg.Expires > 0 {
		life := s.cfg.Expires
		if life <= 0 {
			life = acceptExpiresDefault
		}
		o.Expires = now.Add(life)
	}
	if a.Nonce || s.cfg.Nonce != nil {
		nonce := s.cfg.Nonce
		if nonce == nil {
			nonce = RandomNonce
		}
		var err error
		if o.Nonce, err = nonce(); err != nil {
			return fmt.Errorf("sig: nonce: %w", err)
		}
	}
	if err := SignRFC9421(req, s.key, o); err != nil {
		return err
	}
	return nil
}

// acceptExpiresDefault is the lifetime written when a server asks for
// expires and the Signer has none configured: Mastodon's default window.
const acceptExpiresDefault = 5 * time.Minute

// AcceptSignature says what v accepts for req, for an Accept-Signature
// field on a refusal: label v's Label (or LabelDefault) over "@method",
// "@target-uri", "@authority" and, for a request with a body,
// "content-digest", with created, and with nonce when v keeps nonces, and
// tag when v selects one: what Verify requires, in the shape RFC 9421
// signers (Mastodon 4.7, Fedify) send. No alg is named: v accepts every
// algorithm it implements.
func (v *Verifier) AcceptSignature(req *http.Request) AcceptSignature {
	a := AcceptSignature{Label: v.cfg.Label, Components: []string{`"@method"`, `"@target-uri"`, `"@authority"`},
		Created: true, Nonce: v.cfg.Nonces != nil, Tag: v.cfg.Tag}
	if a.Label == "" {
		a.Label = LabelDefault
	}
	if hasBody(req) {
		a.Components = append(a.Components, `"content-digest"`)
	}
	return a
}
