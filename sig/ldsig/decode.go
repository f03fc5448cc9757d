package ldsig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
)

// Bounds on a hostile document.
const (
	// MaxBodyBytesDefault bounds the body VerifyActivity reads: Mastodon's
	// inbox limit.
	MaxBodyBytesDefault = 1 << 20
	maxDepth            = 64
	maxNodes            = 1 << 16
	// maxTwins bounds anonymous objects under one anonymous object that
	// look alike: URDNA2015 tries every order of such a group, so a group
	// of n costs n!.
	maxTwins = 3
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

// blankLabel matches a blank node identifier as JSON-LD reads one.
var blankLabel = regexp.MustCompile(`^_:[A-Za-z0-9_.\-]+$`)

// checkShape refuses what could make URDNA2015 take exponential time.
// Without explicit blank node identifiers the blank nodes of a JSON-LD
// document form a tree (each anonymous object is named once, by its
// parent), and the algorithm's costly permutations only arise among
// look-alike anonymous children of an anonymous object.
func checkShape(v any) error {
	switch n := v.(type) {
	case string:
		if blankLabel.MatchString(n) {
			return fmt.Errorf("%w: explicit blank node identifier %.64q", ErrTooComplex, n)
		}
	case []any:
		for _, e := range n {
			if err := checkShape(e); err != nil {
				return err
			}
		}
	case map[string]any:
		if !hasID(n) {
			if err := checkTwins(n); err != nil {
				return err
			}
		}
		for k, e := range n {
			if k == "@context" {
				continue // term definitions, not data
			}
			if err := checkShape(e); err != nil {
				return err
			}
		}
	}
	return nil
}

func hasID(m map[string]any) bool {
	for _, k := range []string{"id", "@id"} {
		if s, ok := m[k].(string); ok && s != "" {
			return true
		}
	}
	return false
}

// checkTwins counts the anonymous children of an anonymous object by
// their shape: their scalar members, with objects and arrays reduced to a
// marker, which is what tells blank nodes apart at the first degree.
func checkTwins(m map[string]any) error {
	seen := map[string]int{}
	count := func(c map[string]any) error {
		if hasID(c) {
			return nil
		}
		shape := make(map[string]any, len(c))
		for k, v := range c {
			switch v.(type) {
			case map[string]any:
				shape[k] = "{}"
			case []any:
				shape[k] = "[]"
			default:
				shape[k] = v
			}
		}
		b, _ := json.Marshal(shape)
		seen[string(b)]++
		if seen[string(b)] > maxTwins {
			return fmt.Errorf("%w: more than %d look-alike anonymous objects in one anonymous object", ErrTooComplex, maxTwins)
		}
		return nil
	}
	for k, v := range m {
		if k == "@context" {
			continue
		}
		switch c := v.(type) {
		case map[string]any:
			if err := count(c); err != nil {
				return err
			}
		case []any:
			for _, e := range c {
				if cm, ok := e.(map[string]any); ok {
					if err := count(cm); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}
