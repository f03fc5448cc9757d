package sig

import (
	"fmt"

	"github.com/dunglas/httpsfv"
)

// Helpers over structured fields (RFC 8941) that httpsfv leaves out, and
// the bound on the raw field lines they are parsed from. The fast paths
// are sffast.go (parsing) and sfwrite.go (serialising).

// hasParam reports whether p has key k; p may be nil.
func hasParam(p *httpsfv.Params, k string) bool {
	if p == nil {
		return false
	}
	_, ok := p.Get(k)
	return ok
}

// paramNames returns p's names in order; p may be nil.
func paramNames(p *httpsfv.Params) []string {
	if p == nil {
		return nil
	}
	return p.Names()
}

// dictOrNew parses an existing signature field as a dictionary, or starts
// one.
func dictOrNew(lines []string) (*httpsfv.Dictionary, error) {
	if len(lines) == 0 {
		return httpsfv.NewDictionary(), nil
	}
	d, err := httpsfv.UnmarshalDictionary(lines)
	if err != nil {
		return nil, fmt.Errorf("%w: existing signature field: %v", ErrMalformed, err)
	}
	return d, nil
}

// marshalMember serialises a lone dictionary member, as a one-member list.
func marshalMember(mem httpsfv.Member) (string, error) {
	s, err := httpsfv.Marshal(httpsfv.List{mem})
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return s, nil
}

// reserialize re-serialises a structured field whose type we are not told:
// dictionary, else list, else item. Where two readings both parse, they
// serialise identically.
func reserialize(lines []string) (string, error) {
	if d, err := httpsfv.UnmarshalDictionary(lines); err == nil {
		if s, err := httpsfv.Marshal(d); err == nil {
			return s, nil
		}
	}
	if l, err := httpsfv.UnmarshalList(lines); err == nil {
		if s, err := httpsfv.Marshal(l); err == nil {
			return s, nil
		}
	}
	if it, err := httpsfv.UnmarshalItem(lines); err == nil {
		if s, err := httpsfv.Marshal(it); err == nil {
			return s, nil
		}
	}
	return "", fmt.Errorf("%w: field is not a structured field", ErrMalformed)
}

// linesLen is the size of a field's lines, which parsers bound before
// parsing hostile input.
func linesLen(lines []string) int {
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	return n
}
