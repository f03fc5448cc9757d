package ldsig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Bounds on a hostile document.
const (
	// MaxBodyBytesDefault bounds the body VerifyActivity reads: Mastodon's
	// inbox limit.
	MaxBodyBytesDefault = 1 << 20
	maxDepth            = 64
	maxNodes            = 1 << 16
)

// decodeObject parses body as one JSON object, refusing duplicate member
// names (two readers could each take a different one: the signature would
// cover one, the application read the other), more than maxDepth levels
// and more than maxNodes values.
func decodeObject(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	nodes := 0
	v, err := decodeValue(dec, 0, &nodes)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the JSON object", ErrMalformed)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: not a JSON object", ErrMalformed)
	}
	return m, nil
}

var errNotValue = errors.New("unexpected delimiter")

func decodeValue(dec *json.Decoder, depth int, nodes *int) (any, error) {
	*nodes++
	if *nodes > maxNodes {
		return nil, fmt.Errorf("%w: more than %d JSON values", ErrTooComplex, maxNodes)
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d", ErrTooComplex, maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
				}
				k, _ := kt.(string)
				if _, dup := m[k]; dup {
					return nil, fmt.Errorf("%w: member %.64q repeated", ErrMalformed, k)
				}
				v, err := decodeValue(dec, depth+1, nodes)
				if err != nil {
					return nil, err
				}
				m[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
			}
			return m, nil
		case '[':
			l := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1, nodes)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
			}
			return l, nil
		}
		return nil, fmt.Errorf("%w: %v", ErrMalformed, errNotValue)
	default:
		return t, nil // string, float64, bool or nil
	}
}
