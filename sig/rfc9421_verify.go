package sig

import (
	"crypto"
	"fmt"
	"net/http"
	"time"

	"github.com/dunglas/httpsfv"
)

// RFC9421Signature is one parsed RFC 9421 signature: a Signature-Input member
// and the Signature member of the same label.
type RFC9421Signature struct {
	Label string
	KeyID string
	Alg   string
	Nonce string
	Tag   string
	// Created and Expires are zero when the parameter is absent.
	Created, Expires time.Time
	Signature        []byte

	cov coverage
}

// Components returns the covered component identifiers, serialised
// (`"@method"`, `"example-dict";sf`), in signed order.
func (s *RFC9421Signature) Components() []string {
	out := make([]string, 0, len(s.cov.comps))
	for i := range s.cov.comps {
		c := &s.cov.comps[i]
		id := c.id
		if id == "" {
			var err error
			id, err = marshalItem(httpsfv.Item{Value: c.name, Params: c.params})
			if err != nil {
				id = fmt.Sprint(c.name) // unreachable: parsed items re-serialise
			}
		}
		out = append(out, id)
	}
	return out
}

// Covers reports whether the signature covers the component name,
// ignoring component parameters.
func (s *RFC9421Signature) Covers(name string) bool {
	for i := range s.cov.comps {
		if c := &s.cov.comps[i]; c.name == name && !hasParam(c.params, "req") {
			return true
		}
	}
	return false
}

// ParseRFC9421Signatures parses the Signature-Input and Signature fields of h
// into one RFC9421Signature per label, in Signature-Input order. It returns
// ErrNoSignature when there is no Signature-Input.
func ParseRFC9421Signatures(h http.Header) ([]*RFC9421Signature, error) {
	return parseRFC9421Signatures(h, true)
}

// parseRFC9421Signatures parses with the fast parser first when fast is set,
// else with httpsfv alone (the reference the fast path is tested against).
func parseRFC9421Signatures(h http.Header, fast bool) ([]*RFC9421Signature, error) {
	// The names are canonical already, so index the map directly.
	inLines, sgLines := h["Signature-Input"], h["Signature"]
	if len(inLines) == 0 {
		return nil, ErrNoSignature
	}
	if linesLen(inLines) > maxSigHeader || linesLen(sgLines) > maxSigHeader {
		return nil, fmt.Errorf("%w: signature fields too large", ErrMalformed)
	}
	var in []sigInputMember
	ok := false
	if fast {
		in, ok = fastSigInput(inLines)
	}
	if !ok {
		d, err := httpsfv.UnmarshalDictionary(inLines)
		if err != nil {
			return nil, fmt.Errorf("%w: Signature-Input: %v", ErrMalformed, err)
		}
		in = slowSigInput(d)
	}
	var sgBuf [2]bytesMember
	var sg []bytesMember
	ok = false
	if fast {
		sg, ok = fastBytesDictTo(sgLines, sgBuf[:0])
	}
	if !ok {
		d, err := httpsfv.UnmarshalDictionary(sgLines)
		if err != nil {
			return nil, fmt.Errorf("%w: Signature: %v", ErrMalformed, err)
		}
		sg = slowBytesDict(d)
	}
	out := make([]*RFC9421Signature, 0, len(in))
	for i := range in {
		s, err := parseOne(&in[i], sg)
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

// slowSigInput converts an httpsfv Signature-Input dictionary.
func slowSigInput(d *httpsfv.Dictionary) []sigInputMember {
	out := make([]sigInputMember, 0, len(d.Names()))
	for _, label := range d.Names() {
		mem, _ := d.Get(label)
		il, isList := mem.(httpsfv.InnerList)
		m := sigInputMember{label: label, bad: !isList}
		if isList {
			m.cov = coverageOf(il)
			for _, it := range il.Items {
				if _, ok := it.Value.(string); !ok {
					m.nonString = true
				}
			}
			for _, k := range il.Params.Names() {
				v, _ := il.Params.Get(k)
				sp := sigParam{key: k, kind: 'o'}
				switch x := v.(type) {
				case string:
					sp.kind, sp.str = 's', x
				case int64:
					sp.kind, sp.num = 'i', x
				}
				m.sp.add(sp)
			}
		}
		out = append(out, m)
	}
	return out
}

// slowBytesDict converts an httpsfv dictionary whose members should be
// byte sequences; others are marked.
func slowBytesDict(d *httpsfv.Dictionary) []bytesMember {
	out := make([]bytesMember, 0, len(d.Names()))
	for _, k := range d.Names() {
		mem, _ := d.Get(k)
		bm := bytesMember{key: k}
		if it, ok := mem.(httpsfv.Item); !ok {
			bm.bad = 'l'
		} else if b, ok := it.Value.([]byte); !ok {
			bm.bad = 'i'
		} else {
			bm.val = b
		}
		out = append(out, bm)
	}
	return out
}

func parseOne(m *sigInputMember, sg []bytesMember) (*RFC9421Signature, error) {
	label := m.label
	if m.bad {
		return nil, fmt.Errorf("%w: Signature-Input %q is not an inner list", ErrMalformed, label)
	}
	if len(m.cov.comps) > maxComponents {
		return nil, fmt.Errorf("%w: %d components", ErrMalformed, len(m.cov.comps))
	}
	var sm *bytesMember
	for i := range sg {
		if sg[i].key == label {
			sm = &sg[i]
			break
		}
	}
	switch {
	case sm == nil:
		return nil, fmt.Errorf("%w: no Signature for label %q", ErrMalformed, label)
	case sm.bad == 'l':
		return nil, fmt.Errorf("%w: Signature %q is not an item", ErrMalformed, label)
	case sm.bad != 0 || len(sm.val) == 0 || len(sm.val) > maxSignatureSize:
		return nil, fmt.Errorf("%w: Signature %q is not a byte sequence", ErrMalformed, label)
	}
	if m.nonString {
		return nil, fmt.Errorf("%w: component is not a string", ErrMalformed)
	}
	if m.sp.wrong != "" {
		return nil, fmt.Errorf("%w: parameter %q has the wrong type", ErrMalformed, m.sp.wrong)
	}
	s := &RFC9421Signature{Label: label, Signature: sm.val, cov: m.cov,
		KeyID: m.sp.keyid, Alg: m.sp.alg, Nonce: m.sp.nonce, Tag: m.sp.tag}
	if m.sp.hasCreated {
		s.Created = time.Unix(m.sp.created, 0)
	}
	if m.sp.hasExpires {
		s.Expires = time.Unix(m.sp.expires, 0)
	}
	return s, nil
}

// VerifyRFC9421 checks s over req with pub. alg is the algorithm the key is
// known to use; empty means s.Alg, or else the key type's default. An alg
// parameter that disagrees with alg is refused. It checks neither time nor
// required components nor Content-Digest; Verifier does.
func VerifyRFC9421(req *http.Request, s *RFC9421Signature, pub crypto.PublicKey, alg string) error {
	return verifyRFC9421(requestMessage(req, ""), s, pub, alg)
}

// VerifyRFC9421Response checks s over resp, with ;req components taken from
// resp.Request.
func VerifyRFC9421Response(resp *http.Response, s *RFC9421Signature, pub crypto.PublicKey, alg string) error {
	return verifyRFC9421(responseMessage(resp, ""), s, pub, alg)
}

func verifyRFC9421(m *message, s *RFC9421Signature, pub crypto.PublicKey, alg string) error {
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
	buf := getBuf()
	defer putBuf(buf)
	base, _, err := appendSignatureBase((*buf)[:0], m, &s.cov)
	if err != nil {
		return err
	}
	*buf = base
	return verifyRaw(alg, pub, base, s.Signature)
}
