package directorytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
)

var errStrict = errors.New("directorytest: strict JSON violation")

// parseStrict decodes one JSON value, refusing duplicate names at every
// depth, invalid UTF-8 and trailing values, as the Directory's decoder does.
// Objects become map[string]any, numbers json.Number.
func parseStrict(data []byte) (any, error) {
	if !utf8.Valid(data) {
		return nil, errStrict
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := value(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errStrict
	}
	return v, nil
}

func value(dec *json.Decoder, depth int) (any, error) {
	if depth > 32 {
		return nil, errStrict
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, errStrict
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := map[string]any{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, errStrict
				}
				name, _ := k.(string)
				if _, dup := m[name]; dup {
					return nil, errStrict
				}
				v, err := value(dec, depth+1)
				if err != nil {
					return nil, err
				}
				m[name] = v
			}
			if _, err := dec.Token(); err != nil {
				return nil, errStrict
			}
			return m, nil
		case '[':
			var a []any
			for dec.More() {
				v, err := value(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, errStrict
			}
			if a == nil {
				a = []any{}
			}
			return a, nil
		}
		return nil, errStrict
	default:
		return t, nil
	}
}
