package sig

import (
	"encoding/base64"
	"strings"

	"github.com/dunglas/httpsfv"
)

// A fast, strict parser for the shapes Signature-Input, Signature and
// Content-Digest nearly always take:
//
//	label=("@method" "content-digest" "x";sf);keyid="k";alg="a";created=1
//	label=:base64:, sha-256=:base64:
//
// It accepts only canonical serialisations (single spaces inside inner
// lists, no space after ';', strings without escapes, integers without
// sign or leading zeros, bare boolean true), so the raw text of an inner
// list is its canonical serialisation and @signature-params can reuse it.
// On anything else it reports false and the caller parses with httpsfv,
// which then accepts or refuses as it always did: the fast path never
// refuses. FuzzFastSF holds both to the same results.

// sigParam is one signature parameter: its value is a string, an integer,
// or something else (kind 'o'), which the parameters we read refuse.
type sigParam struct {
	key  string
	kind byte // 's' string, 'i' integer, 'o' other
	str  string
	num  int64
}

// component is one covered component.
type component struct {
	name   string
	params *httpsfv.Params // nil when there are none
	id     string          // serialised identifier; "" until computed
}

// coverage is a parsed or built Signature-Input inner list.
type coverage struct {
	comps  []component
	params *httpsfv.Params // signature parameters; nil on the fast path
	ser    string          // serialised inner list when already known
	src    httpsfv.InnerList
	hasSrc bool // src is what comps and params came from
}

func coverageOf(il httpsfv.InnerList) coverage {
	c := coverage{comps: make([]component, len(il.Items)), params: il.Params, src: il, hasSrc: true}
	for i, it := range il.Items {
		name, _ := it.Value.(string) // callers check items are strings
		p := it.Params
		if len(paramNames(p)) == 0 {
			p = nil // the fast paths in the base builder want nil for none
		}
		c.comps[i] = component{name: name, params: p}
	}
	return c
}

// innerList rebuilds the httpsfv form, for the slow serialisation path.
func (c *coverage) innerList() httpsfv.InnerList {
	il := httpsfv.InnerList{Items: make([]httpsfv.Item, len(c.comps)), Params: c.params}
	if il.Params == nil {
		il.Params = httpsfv.NewParams()
	}
	for i, x := range c.comps {
		p := x.params
		if p == nil {
			p = httpsfv.NewParams()
		}
		il.Items[i] = httpsfv.Item{Value: x.name, Params: p}
	}
	return il
}

// serialized returns the @signature-params value.
func (c *coverage) serialized() (string, error) {
	if c.ser != "" {
		return c.ser, nil
	}
	if c.hasSrc {
		return marshalInnerList(c.src)
	}
	return marshalInnerList(c.innerList())
}

// sigInputMember is one Signature-Input member.
type sigInputMember struct {
	label string
	cov   coverage
	sp    sigParams
	// bad (not an inner list) and nonString (a component that is not a
	// string) come from the slow path only.
	bad, nonString bool
}

// sigParams are the signature parameters parseOne reads, typed.
type sigParams struct {
	keyid, alg, nonce, tag string
	created, expires       int64
	hasCreated, hasExpires bool
	wrong                  string // the first parameter of the wrong type
}

func (ps *sigParams) add(sp sigParam) {
	ok := true
	switch sp.key {
	case "keyid":
		ps.keyid, ok = sp.str, sp.kind == 's'
	case "alg":
		ps.alg, ok = sp.str, sp.kind == 's'
	case "nonce":
		ps.nonce, ok = sp.str, sp.kind == 's'
	case "tag":
		ps.tag, ok = sp.str, sp.kind == 's'
	case "created":
		ps.created, ps.hasCreated, ok = sp.num, true, sp.kind == 'i'
	case "expires":
		ps.expires, ps.hasExpires, ok = sp.num, true, sp.kind == 'i'
	}
	// Unknown parameters are covered by the base, so harmless.
	if !ok && ps.wrong == "" {
		ps.wrong = sp.key
	}
}

// bytesMember is one member of a dictionary of byte sequences.
type bytesMember struct {
	key string
	val []byte
	bad byte // slow path only: 'l' an inner list, 'i' an item of another type
}

type sfScan struct {
	s   string
	off int
}

func (p *sfScan) eof() bool { return p.off >= len(p.s) }

func (p *sfScan) peek() byte {
	if p.off < len(p.s) {
		return p.s[p.off]
	}
	return 0
}

func (p *sfScan) key() (string, bool) {
	start := p.off
	if p.eof() {
		return "", false
	}
	if c := p.s[p.off]; !(c >= 'a' && c <= 'z') && c != '*' {
		return "", false
	}
	p.off++
	for p.off < len(p.s) {
		c := p.s[p.off]
		if (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == '*' {
			p.off++
			continue
		}
		break
	}
	return p.s[start:p.off], true
}

// str reads a string without escapes.
func (p *sfScan) str() (string, bool) {
	if p.peek() != '"' {
		return "", false
	}
	start := p.off + 1
	for i := start; i < len(p.s); i++ {
		c := p.s[i]
		if c == '"' {
			p.off = i + 1
			return p.s[start:i], true
		}
		if c < 0x20 || c > 0x7e || c == '\\' {
			return "", false
		}
	}
	return "", false
}

// integer reads a canonical non-negative integer of at most 15 digits
// that is not the start of a decimal.
func (p *sfScan) integer() (int64, bool) {
	start := p.off
	var n int64
	for p.off < len(p.s) && p.s[p.off] >= '0' && p.s[p.off] <= '9' {
		n = n*10 + int64(p.s[p.off]-'0')
		p.off++
	}
	d := p.off - start
	if d == 0 || d > 15 || (d > 1 && p.s[start] == '0') || p.peek() == '.' {
		return 0, false
	}
	return n, true
}

// params reads ;key[=value] parameters. add, when not nil, receives each.
func (p *sfScan) params(add func(sigParam)) bool {
	var seen [16]string
	n := 0
	for p.peek() == ';' {
		p.off++
		k, ok := p.key()
		if !ok {
			return false
		}
		for _, s := range seen[:min(n, len(seen))] {
			if s == k {
				return false // httpsfv would overwrite; leave it to httpsfv
			}
		}
		if n >= len(seen) {
			return false
		}
		seen[n] = k
		n++
		sp := sigParam{key: k}
		if p.peek() == '=' {
			p.off++
			switch c := p.peek(); {
			case c == '"':
				s, ok := p.str()
				if !ok {
					return false
				}
				sp.kind, sp.str = 's', s
			case c >= '0' && c <= '9':
				v, ok := p.integer()
				if !ok {
					return false
				}
				sp.kind, sp.num = 'i', v
			default:
				return false
			}
		} else {
			sp.kind = 'o' // boolean true
		}
		if add != nil {
			add(sp)
		}
	}
	return true
}

// next moves past the OWS "," OWS between dictionary members. It reports
// done at the end and false on anything but a well-placed comma.
func (p *sfScan) next() (done, ok bool) {
	for p.peek() == ' ' || p.peek() == '\t' {
		p.off++
	}
	if p.eof() {
		return true, true
	}
	if p.s[p.off] != ',' {
		return false, false
	}
	p.off++
	for p.peek() == ' ' || p.peek() == '\t' {
		p.off++
	}
	return false, !p.eof()
}

func (p *sfScan) start() {
	for p.peek() == ' ' {
		p.off++
	}
}

// fastSigInput parses Signature-Input field lines of the common shape.
func fastSigInput(lines []string) ([]sigInputMember, bool) {
	p := sfScan{s: strings.Join(lines, ", ")}
	p.start()
	if p.eof() {
		return nil, false
	}
	// One allocation holds the usual single member, its components and
	// its parameters; append moves on to the heap beyond them.
	st := new(fastStore)
	out := st.members[:0]
	for {
		label, ok := p.key()
		if !ok || p.peek() != '=' {
			return nil, false
		}
		for i := range out {
			if out[i].label == label {
				return nil, false
			}
		}
		p.off++
		if p.peek() != '(' {
			return nil, false
		}
		// Fill the member in place: the struct is large to copy.
		var m *sigInputMember
		if len(out) == 0 {
			out = st.members[:1]
			m = &out[0]
			m.cov.comps = st.comps[:0]
		} else {
			out = append(out, sigInputMember{})
			m = &out[len(out)-1]
		}
		m.label = label
		open := p.off
		p.off++
		for p.peek() != ')' {
			if len(m.cov.comps) > 0 {
				if p.peek() != ' ' {
					return nil, false
				}
				p.off++
			}
			istart := p.off
			name, ok := p.str()
			if !ok {
				return nil, false
			}
			c := component{name: name}
			if p.peek() == ';' {
				c.params = httpsfv.NewParams()
				if !p.params(func(sp sigParam) { c.params.Add(sp.key, sp.value()) }) {
					return nil, false
				}
			}
			if ch := p.peek(); ch != ' ' && ch != ')' {
				return nil, false
			}
			c.id = p.s[istart:p.off]
			m.cov.comps = append(m.cov.comps, c)
		}
		p.off++
		if !p.params(m.sp.add) {
			return nil, false
		}
		m.cov.ser = p.s[open:p.off]
		done, ok := p.next()
		if !ok {
			return nil, false
		}
		if done {
			return out, true
		}
	}
}

// fastStore backs fastSigInput's result in the common case.
type fastStore struct {
	members [1]sigInputMember
	comps   [8]component
}

// value is the httpsfv form of a fast-parsed parameter value.
func (sp sigParam) value() any {
	switch sp.kind {
	case 's':
		return sp.str
	case 'i':
		return sp.num
	}
	return true
}

// fastBytesDict parses a dictionary whose members are all byte sequences
// without parameters (Signature, Content-Digest).
func fastBytesDict(lines []string) ([]bytesMember, bool) {
	return fastBytesDictTo(lines, nil)
}

// fastBytesDictTo is fastBytesDict appending to out.
func fastBytesDictTo(lines []string, out []bytesMember) ([]bytesMember, bool) {
	ok := scanBytesDict(lines, func(k, enc string) bool {
		v, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			return false
		}
		out = append(out, bytesMember{key: k, val: v})
		return true
	})
	return out, ok
}

// scanBytesDict walks a dictionary of byte sequences without parameters,
// calling each with a member's key and base64 text, and reports whether
// the whole field had that shape and each returned true. Members come at
// most maxFastMembers, with distinct keys.
func scanBytesDict(lines []string, each func(key, enc string) bool) bool {
	p := sfScan{s: strings.Join(lines, ", ")}
	p.start()
	if p.eof() {
		return false
	}
	var keys [maxFastMembers]string
	for n := 0; ; n++ {
		k, ok := p.key()
		if !ok || p.peek() != '=' || n == len(keys) {
			return false
		}
		for _, x := range keys[:n] {
			if x == k {
				return false
			}
		}
		keys[n] = k
		p.off++
		if p.peek() != ':' {
			return false
		}
		end := strings.IndexByte(p.s[p.off+1:], ':')
		if end < 0 {
			return false
		}
		enc := p.s[p.off+1 : p.off+1+end]
		// The decoder refuses every byte httpsfv refuses but CR and LF,
		// which it skips.
		if strings.IndexByte(enc, '\n') >= 0 || strings.IndexByte(enc, '\r') >= 0 {
			return false
		}
		if !each(k, enc) {
			return false
		}
		p.off += end + 2
		done, ok := p.next()
		if !ok {
			return false
		}
		if done {
			return true
		}
	}
}

// maxFastMembers bounds the dictionaries the fast path takes.
const maxFastMembers = 8
