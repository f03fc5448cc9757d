package sig

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/dunglas/httpsfv"
)

// Fast serialisation of the structured-field shapes signature bases use
// (component identifiers and @signature-params). Anything outside the
// common bare-item types falls back to httpsfv, so the output is always
// httpsfv's canonical form.

func writeItem(b *strings.Builder, it httpsfv.Item) bool {
	return writeBare(b, it.Value) && writeParams(b, it.Params)
}

func writeParams(b *strings.Builder, p *httpsfv.Params) bool {
	if p == nil {
		return true
	}
	for _, k := range p.Names() {
		v, _ := p.Get(k)
		b.WriteByte(';')
		b.WriteString(k) // keys were validated when parsed or built
		if v == true {
			continue
		}
		b.WriteByte('=')
		if !writeBare(b, v) {
			return false
		}
	}
	return true
}

func writeBare(b *strings.Builder, v any) bool {
	switch x := v.(type) {
	case string:
		b.WriteByte('"')
		for i := 0; i < len(x); i++ {
			c := x[i]
			if c < 0x20 || c > 0x7e {
				return false // let httpsfv report it
			}
			if c == '"' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		}
		b.WriteByte('"')
	case int64:
		if x > 999_999_999_999_999 || x < -999_999_999_999_999 {
			return false
		}
		b.WriteString(strconv.FormatInt(x, 10))
	case bool:
		if x {
			b.WriteString("?1")
		} else {
			b.WriteString("?0")
		}
	case []byte:
		b.WriteByte(':')
		b.WriteString(base64.StdEncoding.EncodeToString(x))
		b.WriteByte(':')
	default:
		return false
	}
	return true
}

// marshalItem serialises a component identifier.
func marshalItem(it httpsfv.Item) (string, error) {
	var b strings.Builder
	if it.Params == nil || len(it.Params.Names()) == 0 {
		if s, ok := it.Value.(string); ok && isPlain(s) {
			return `"` + s + `"`, nil
		}
	}
	if writeItem(&b, it) {
		return b.String(), nil
	}
	return httpsfv.Marshal(it)
}

// marshalInnerList serialises @signature-params.
func marshalInnerList(il httpsfv.InnerList) (string, error) {
	var b strings.Builder
	b.Grow(64 + 24*len(il.Items))
	b.WriteByte('(')
	for i, it := range il.Items {
		if i > 0 {
			b.WriteByte(' ')
		}
		if !writeItem(&b, it) {
			return httpsfv.Marshal(httpsfv.List{il})
		}
	}
	b.WriteByte(')')
	if !writeParams(&b, il.Params) {
		return httpsfv.Marshal(httpsfv.List{il})
	}
	return b.String(), nil
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
