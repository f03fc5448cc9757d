package sig

import (
	"bytes"
	"crypto"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
)

// LabelDefault is the RFC 9421 signature label used when none is given.
const LabelDefault = "sig1"

// Bounds on hostile Signature-Input and Signature fields.
const (
	maxSigHeader     = 16 << 10
	maxComponents    = 64
	maxSignatureSize = 2048
)

// defaultParamOrder is the order Signature-Input parameters are written
// in; it is the Directory's (and Activity-Relay's) order.
var defaultParamOrder = []string{"keyid", "alg", "tag", "nonce", "created", "expires"}

// SignOpts says what an RFC 9421 signature covers and which parameters it
// carries. Only Components is required.
type SignOpts struct {
	// Label names the signature in Signature-Input and Signature.
	// Defaults to LabelDefault.
	Label string
	// Components lists covered components in order, each a name such as
	// "@method" or "content-digest", optionally with parameters:
	// "example-dict;sf", `@query-param;name="pet"`, "content-type;req".
	// The serialised form (`"@method"`) is accepted as well.
	Components []string
	// Created and Expires become the created and expires parameters, in
	// whole seconds; zero values are omitted.
	Created, Expires time.Time
	// Nonce, Tag and KeyID become the nonce, tag and keyid parameters;
	// empty values are omitted.
	Nonce, Tag, KeyID string
	// Alg is the algorithm to sign with, written as the alg parameter
	// unless OmitAlg is set. Defaults to the key's: rsa-v1_5-sha256 for
	// RSA, ed25519, ecdsa-p256-sha256, hmac-sha256 for a []byte key; a
	// defaulted Alg is never written.
	Alg string
	// OmitAlg signs with Alg but leaves the alg parameter out, for
	// verifiers that take the algorithm from the key. Defaults to false.
	OmitAlg bool
	// ParamOrder overrides the order of the parameters, by name.
	// Defaults to keyid, alg, tag, nonce, created, expires.
	ParamOrder []string
}

// params builds the signature parameters in order.
func (o *SignOpts) params(writeAlg bool) *httpsfv.Params {
	p := httpsfv.NewParams()
	order := o.ParamOrder
	if len(order) == 0 {
		order = defaultParamOrder
	}
	for _, name := range order {
		switch name {
		case "keyid":
			if o.KeyID != "" {
				p.Add("keyid", o.KeyID)
			}
		case "alg":
			if writeAlg {
				p.Add("alg", o.Alg)
			}
		case "tag":
			if o.Tag != "" {
				p.Add("tag", o.Tag)
			}
		case "nonce":
			if o.Nonce != "" {
				p.Add("nonce", o.Nonce)
			}
		case "created":
			if !o.Created.IsZero() {
				p.Add("created", o.Created.Unix())
			}
		case "expires":
			if !o.Expires.IsZero() {
				p.Add("expires", o.Expires.Unix())
			}
		}
	}
	return p
}

// parseComponent accepts `@method`, `"@method"`, `example-dict;sf` or
// `"example-dict";sf` and returns the component identifier item.
func parseComponent(c string) (httpsfv.Item, error) {
	if !strings.HasPrefix(c, `"`) {
		name, rest, _ := strings.Cut(c, ";")
		if rest != "" {
			rest = ";" + rest
		}
		c = `"` + strings.ToLower(name) + `"` + rest
	}
	it, err := httpsfv.UnmarshalItem([]string{c})
	if err != nil {
		return httpsfv.Item{}, fmt.Errorf("%w: component %q: %v", ErrMalformed, c, err)
	}
	if _, ok := it.Value.(string); !ok {
		return httpsfv.Item{}, fmt.Errorf("%w: component %q is not a string", ErrMalformed, c)
	}
	return it, nil
}

func (o *SignOpts) inner(key any) (httpsfv.InnerList, string, error) {
	alg, writeAlg := o.Alg, !o.OmitAlg && o.Alg != ""
	if alg == "" {
		a, err := algForKey(key)
		if err != nil {
			return httpsfv.InnerList{}, "", err
		}
		alg = a
	}
	if len(o.Components) > maxComponents {
		return httpsfv.InnerList{}, "", fmt.Errorf("%w: %d components", ErrMalformed, len(o.Components))
	}
	items := make([]httpsfv.Item, 0, len(o.Components))
	for _, c := range o.Components {
		it, err := parseComponent(c)
		if err != nil {
			return httpsfv.InnerList{}, "", err
		}
		items = append(items, it)
	}
	oo := *o
	oo.Alg = alg
	return httpsfv.InnerList{Items: items, Params: oo.params(writeAlg)}, alg, nil
}

// RFC9421SignatureBase returns the RFC 9421 signature base that opts would sign for
// req, and the serialised @signature-params value. It signs nothing.
func RFC9421SignatureBase(req *http.Request, opts *SignOpts) (base []byte, params string, err error) {
	il, _, err := opts.inner(nil)
	if err != nil && opts.Alg == "" {
		// With no key, alg only matters when written.
		o := *opts
		o.OmitAlg, o.Alg = true, "none"
		il, _, err = o.inner(nil)
	}
	if err != nil {
		return nil, "", err
	}
	cov := coverageOf(il)
	return signatureBase(requestMessage(req, ""), &cov)
}

// SignRFC9421 signs req with key under RFC 9421 and adds the signature to
// the Signature-Input and Signature fields, replacing a member with the
// same label and keeping others. key is a crypto.Signer (RSA of at least
// MinRSABits, Ed25519, ECDSA P-256) or a []byte HMAC secret. It does not
// set Content-Digest or Date; cover them only once set.
func SignRFC9421(req *http.Request, key crypto.PrivateKey, opts *SignOpts) error {
	return signRFC9421(requestMessage(req, ""), req.Header, key, opts)
}

// SignRFC9421Response signs resp, as SignRFC9421 does a request. Components
// with ;req are taken from resp.Request.
func SignRFC9421Response(resp *http.Response, key crypto.PrivateKey, opts *SignOpts) error {
	if resp.Header == nil {
		resp.Header = http.Header{}
	}
	return signRFC9421(responseMessage(resp, ""), resp.Header, key, opts)
}

func signRFC9421(m *message, h http.Header, key crypto.PrivateKey, opts *SignOpts) error {
	if opts == nil {
		opts = &SignOpts{}
	}
	if err := checkSigningKey(key); err != nil {
		return err
	}
	il, alg, err := opts.inner(key)
	if err != nil {
		return err
	}
	cov := coverageOf(il)
	base, _, err := signatureBase(m, &cov)
	if err != nil {
		return err
	}
	raw, err := signRaw(alg, key, base)
	if err != nil {
		return err
	}
	label := opts.Label
	if label == "" {
		label = LabelDefault
	}
	return addSignature(h, label, il, raw)
}

// addSignature appends label to the Signature-Input and Signature
// dictionaries, replacing an existing member of that label.
func addSignature(h http.Header, label string, il httpsfv.InnerList, raw []byte) error {
	in, err := dictOrNew(h.Values("Signature-Input"))
	if err != nil {
		return err
	}
	sg, err := dictOrNew(h.Values("Signature"))
	if err != nil {
		return err
	}
	in.Del(label)
	sg.Del(label)
	in.Add(label, il)
	sg.Add(label, httpsfv.NewItem(raw))
	si, err := httpsfv.Marshal(in)
	if err != nil {
		return fmt.Errorf("%w: label %q: %v", ErrMalformed, label, err)
	}
	ss, err := httpsfv.Marshal(sg)
	if err != nil {
		return fmt.Errorf("%w: label %q: %v", ErrMalformed, label, err)
	}
	h.Set("Signature-Input", si)
	h.Set("Signature", ss)
	return nil
}

// signatureBase builds the RFC 9421 2.5 signature base.
func signatureBase(m *message, cov *coverage) ([]byte, string, error) {
	// One allocation in the common case: identifiers, values of about a
	// header line each, and the parameters.
	return appendSignatureBase(make([]byte, 0, 256+len(cov.ser)+96*len(cov.comps)), m, cov)
}

// appendSignatureBase builds the signature base at the end of b.
func appendSignatureBase(b []byte, m *message, cov *coverage) ([]byte, string, error) {
	if len(cov.comps) > maxComponents {
		return nil, "", fmt.Errorf("%w: %d components", ErrMalformed, len(cov.comps))
	}
	var ids [maxComponents][2]int // offsets of each identifier in b
	for i := range cov.comps {
		c := &cov.comps[i]
		start := len(b)
		var err error
		if b, err = appendIdentifier(b, c); err != nil {
			return nil, "", err
		}
		id := b[start:]
		for _, o := range ids[:i] {
			if bytes.Equal(b[o[0]:o[1]], id) {
				return nil, "", fmt.Errorf("%w: component %s listed twice", ErrMalformed, id)
			}
		}
		ids[i] = [2]int{start, len(b)}
		b = append(b, ": "...)
		vstart := len(b)
		if b, err = appendComponent(b, m, c.name, c.params); err != nil {
			return nil, "", err
		}
		if bytes.ContainsAny(b[vstart:], "\r\n") {
			return nil, "", fmt.Errorf("%w: component %s has a newline", ErrMalformed, b[ids[i][0]:ids[i][1]])
		}
		b = append(b, '\n')
	}
	params, err := cov.serialized()
	if err != nil {
		return nil, "", fmt.Errorf("%w: signature parameters: %v", ErrMalformed, err)
	}
	b = append(b, `"@signature-params": `...)
	b = append(b, params...)
	return b, params, nil
}

func appendIdentifier(b []byte, c *component) ([]byte, error) {
	if c.id != "" {
		return append(b, c.id...), nil
	}
	if isPlain(c.name) && len(paramNames(c.params)) == 0 {
		b = append(b, '"')
		b = append(b, c.name...)
		return append(b, '"'), nil
	}
	id, err := marshalItem(httpsfv.Item{Value: c.name, Params: c.params})
	if err != nil {
		return nil, fmt.Errorf("%w: component: %v", ErrMalformed, err)
	}
	return append(b, id...), nil
}

// appendComponent appends one component's value, writing the common
// derived components and single-line fields in place.
func appendComponent(b []byte, m *message, name string, p *httpsfv.Params) ([]byte, error) {
	if p == nil && m.status == 0 {
		switch name {
		case "@method":
			return append(b, m.method...), nil
		case "@authority":
			return append(b, m.authority...), nil
		case "@target-uri":
			b = append(b, m.scheme...)
			b = append(b, "://"...)
			b = append(b, m.authority...)
			return m.appendRequestTarget(b, true), nil
		case "@request-target":
			return m.appendRequestTarget(b, true), nil
		case "@path":
			return m.appendRequestTarget(b, false), nil
		}
		if name != "" && name[0] != '@' && name != "host" && isLowerName(name) {
			if v := m.header[canonicalName(name)]; len(v) == 1 && !needsTrim(v[0]) {
				return append(b, v[0]...), nil
			}
		}
	}
	v, err := componentValue(m, name, p)
	if err != nil {
		return nil, err
	}
	return append(b, v...), nil
}

// isLowerName reports whether a field name has no upper-case letter.
func isLowerName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return false
		}
	}
	return true
}

// componentValue derives one component's value (RFC 9421 2.1, 2.2).
// p may be nil.
func componentValue(m *message, name string, p *httpsfv.Params) (string, error) {
	if hasParam(p, "req") {
		if m.req == nil {
			return "", fmt.Errorf("%w: %q;req without a request", ErrMissingComponent, name)
		}
		// The request's component, with ;req removed.
		q := httpsfv.NewParams()
		for _, k := range p.Names() {
			if k != "req" {
				v, _ := p.Get(k)
				q.Add(k, v)
			}
		}
		return componentValue(m.req, name, q)
	}
	if name != strings.ToLower(name) || name == "" {
		return "", fmt.Errorf("%w: component %q is not lower case", ErrMalformed, name)
	}
	if strings.HasPrefix(name, "@") {
		return derived(m, name, p)
	}
	return fieldValue(m, name, p)
}

func derived(m *message, name string, p *httpsfv.Params) (string, error) {
	for _, k := range paramNames(p) {
		if !(name == "@query-param" && k == "name") {
			return "", fmt.Errorf("%w: parameter %q on %s", ErrMalformed, k, name)
		}
	}
	if name == "@status" {
		if m.status == 0 {
			return "", fmt.Errorf("%w: @status on a request", ErrMissingComponent)
		}
		return fmt.Sprintf("%03d", m.status), nil
	}
	if m.status != 0 {
		return "", fmt.Errorf("%w: %s on a response", ErrMissingComponent, name)
	}
	switch name {
	case "@method":
		return m.method, nil
	case "@authority":
		return m.authority, nil
	case "@scheme":
		return m.scheme, nil
	case "@target-uri":
		return m.scheme + "://" + m.authority + m.requestTarget(true), nil
	case "@request-target":
		return m.requestTarget(true), nil
	case "@path":
		return m.requestTarget(false), nil
	case "@query":
		return "?" + m.uri.RawQuery, nil
	case "@query-param":
		if p == nil {
			return "", fmt.Errorf("%w: @query-param without a name", ErrMalformed)
		}
		v, ok := p.Get("name")
		want, isStr := v.(string)
		if !ok || !isStr {
			return "", fmt.Errorf("%w: @query-param without a name", ErrMalformed)
		}
		return m.queryParam(want)
	}
	return "", fmt.Errorf("%w: unknown derived component %s", ErrMalformed, name)
}

func fieldValue(m *message, name string, p *httpsfv.Params) (string, error) {
	var sf, bs bool
	var key string
	for _, k := range paramNames(p) {
		v, _ := p.Get(k)
		switch k {
		case "sf":
			sf = true
		case "bs":
			bs = true
		case "key":
			s, ok := v.(string)
			if !ok {
				return "", fmt.Errorf("%w: ;key is not a string", ErrMalformed)
			}
			key = s
		default:
			// ;tr (trailers) and unknown parameters are not supported.
			return "", fmt.Errorf("%w: unsupported parameter %q on %q", ErrMalformed, k, name)
		}
	}
	if bs && (sf || key != "") {
		return "", fmt.Errorf("%w: ;bs with ;sf or ;key on %q", ErrMalformed, name)
	}
	lines, ok := m.fieldLines(name)
	if !ok {
		return "", fmt.Errorf("%w: field %q absent", ErrMissingComponent, name)
	}
	switch {
	case bs:
		enc := make([]string, len(lines))
		for i, l := range lines {
			enc[i] = ":" + base64.StdEncoding.EncodeToString([]byte(l)) + ":"
		}
		return strings.Join(enc, ", "), nil
	case key != "":
		d, err := m.dictionary(name, lines)
		if err != nil {
			return "", err
		}
		mem, ok := d.Get(key)
		if !ok {
			return "", fmt.Errorf("%w: %q has no key %q", ErrMissingComponent, name, key)
		}
		// A lone member serialises like a one-member list.
		return marshalMember(mem)
	case sf:
		return reserialize(lines)
	}
	return strings.Join(lines, ", "), nil
}
