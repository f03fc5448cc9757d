package sig

import (
	"crypto"
	"fmt"
	"net/http"
	"time"

	"github.com/dunglas/httpsfv"
)

// Signature9421 is one parsed RFC 9421 signature: a Signature-Input member
// and the Signature member of the same label.
type Signature9421 struct {
	Label string
	KeyID string
	Alg   string
	Nonce string
	Tag   string
	// Created and Expires are zero when the parameter is absent.
	Created, Expires time.Time
	Signature        []byte

	il httpsfv.InnerList
}

// Components returns the covered component identifiers, serialised
// (`"@method"`, `"example-dict";sf`), in signed order.
func (s *Signature9421) Components() []string {
	out := make([]string, 0, len(s.il.Items))
	for _, it := range s.il.Items {
		id, err := marshalItem(it)
		if err != nil {
			id = fmt.Sprint(it.Value) // unreachable: parsed items re-serialise
		}
		out = append(out, id)
	}
	return out
}

// Covers reports whether the signature covers the component name,
// ignoring component parameters.
func (s *Signature9421) Covers(name string) bool {
	for _, it := range s.il.Items {
		if it.Value.(string) == name {
			if _, req := it.Params.Get("req"); !req {
				return true
			}
		}
	}
	return false
}

// ParseSignatures9421 parses the Signature-Input and Signature fields of h
// into one Signature9421 per label, in Signature-Input order. It returns
// ErrNoSignature when there is no Signature-Input.
func ParseSignatures9421(h http.Header) ([]*Signature9421, error) {
	inLines, sgLines := h.Values("Signature-Input"), h.Values("Signature")
	if len(inLines) == 0 {
		return nil, ErrNoSignature
	}
	if linesLen(inLines) > maxSigHeader || linesLen(sgLines) > maxSigHeader {
		return nil, fmt.Errorf("%w: signature fields too large", ErrMalformed)
	}
	in, err := httpsfv.UnmarshalDictionary(inLines)
	if err != nil {
		return nil, fmt.Errorf("%w: Signature-Input: %v", ErrMalformed, err)
	}
	sg, err := httpsfv.UnmarshalDictionary(sgLines)
	if err != nil {
		return nil, fmt.Errorf("%w: Signature: %v", ErrMalformed, err)
	}
	var out []*Signature9421
	for _, label := range in.Names() {
		s, err := parseOne(label, in, sg)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, ErrNoSignature
	}
	return out, nil
}

func parseOne(label string, in, sg *httpsfv.Dictionary) (*Signature9421, error) {
	m, _ := in.Get(label)
	il, ok := m.(httpsfv.InnerList)
	if !ok {
		return nil, fmt.Errorf("%w: Signature-Input %q is not an inner list", ErrMalformed, label)
	}
	if len(il.Items) > maxComponents {
		return nil, fmt.Errorf("%w: %d components", ErrMalformed, len(il.Items))
	}
	sm, ok := sg.Get(label)
	if !ok {
		return nil, fmt.Errorf("%w: no Signature for label %q", ErrMalformed, label)
	}
	si, ok := sm.(httpsfv.Item)
	if !ok {
		return nil, fmt.Errorf("%w: Signature %q is not an item", ErrMalformed, label)
	}
	raw, ok := si.Value.([]byte)
	if !ok || len(raw) == 0 || len(raw) > maxSignatureSize {
		return nil, fmt.Errorf("%w: Signature %q is not a byte sequence", ErrMalformed, label)
	}
	s := &Signature9421{Label: label, Signature: raw, il: il}
	for _, it := range il.Items {
		if _, ok := it.Value.(string); !ok {
			return nil, fmt.Errorf("%w: component is not a string", ErrMalformed)
		}
	}
	for _, k := range il.Params.Names() {
		v, _ := il.Params.Get(k)
		var ok bool
		switch k {
		case "keyid":
			s.KeyID, ok = v.(string)
		case "alg":
			s.Alg, ok = v.(string)
		case "nonce":
			s.Nonce, ok = v.(string)
		case "tag":
			s.Tag, ok = v.(string)
		case "created", "expires":
			var n int64
			n, ok = v.(int64)
			if k == "created" {
				s.Created = time.Unix(n, 0)
			} else {
				s.Expires = time.Unix(n, 0)
			}
		default:
			ok = true // unknown parameters are covered by the base, so harmless
		}
		if !ok {
			return nil, fmt.Errorf("%w: parameter %q has the wrong type", ErrMalformed, k)
		}
	}
	return s, nil
}

// Verify9421 checks s over req with pub. alg is the algorithm the key is
// known to use; empty means s.Alg, or else the key type's default. An alg
// parameter that disagrees with alg is refused. It checks neither time nor
// required components nor Content-Digest; Verifier does.
func Verify9421(req *http.Request, s *Signature9421, pub crypto.PublicKey, alg string) error {
	return verify9421(requestMessage(req, ""), s, pub, alg)
}

// Verify9421Response checks s over resp, with ;req components taken from
// resp.Request.
func Verify9421Response(resp *http.Response, s *Signature9421, pub crypto.PublicKey, alg string) error {
	return verify9421(responseMessage(resp, ""), s, pub, alg)
}

func verify9421(m *message, s *Signature9421, pub crypto.PublicKey, alg string) error {
	switch {
	case alg != "" && s.Alg != "" && alg != s.Alg:
		return fmt.Errorf("%w: signature says %q, key uses %q", ErrUnsupportedAlgorithm, s.Alg, alg)
	case alg == "" && s.Alg != "":
		alg = s.Alg
	case alg == "":
		a, err := algForKey(pub)
		if err != nil {
			return err
		}
		alg = a
	}
	if _, isHMAC := pub.([]byte); !isHMAC {
		if err := checkPublicKey(pub); err != nil {
			return err
		}
	}
	base, _, err := signatureBase(m, s.il)
	if err != nil {
		return err
	}
	return verifyRaw(alg, pub, base, s.Signature)
}
