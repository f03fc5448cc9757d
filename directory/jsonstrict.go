package directory

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"
)

// strictFields is one JSON object's members, names exact and unique.
type strictFields map[string]json.RawMessage

// errStrict carries the reason a strict decode failed.
type errStrict struct{ reason Reason }

func (e *errStrict) Error() string { return string(e.reason) }

func strictErr(r Reason) error { return &errStrict{r} }

// reasonOf maps a strict-decoding error to its Reason.
func reasonOf(err error) Reason {
	var se *errStrict
	if errors.As(err, &se) {
		return se.reason
	}
	return ReasonJSON
}

// decodeObject strictly decodes one top-level JSON object: valid UTF-8,
// no duplicate names at this level, nothing but whitespace after it.
// Nested objects are checked when their members are read with sub.
func decodeObject(data []byte) (strictFields, error) {
	if !utf8.Valid(data) {
		return nil, strictErr(ReasonJSON)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	f, err := readObject(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, strictErr(ReasonTrailing)
	}
	return f, nil
}

func readObject(dec *json.Decoder) (strictFields, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, strictErr(ReasonJSON)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, strictErr(ReasonJSON)
	}
	f := strictFields{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, strictErr(ReasonJSON)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, strictErr(ReasonJSON)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, strictErr(ReasonJSON)
		}
		if _, dup := f[name]; dup {
			return nil, strictErr(ReasonDuplicate)
		}
		f[name] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, strictErr(ReasonJSON)
	}
	return f, nil
}

// only fails unless the object's names are exactly the given set.
func (f strictFields) only(names ...string) error {
	if len(f) != len(names) {
		return strictErr(ReasonUnknownField)
	}
	for _, n := range names {
		if _, ok := f[n]; !ok {
			return strictErr(ReasonUnknownField)
		}
	}
	return nil
}

// sub strictly decodes a nested object member.
func (f strictFields) sub(name string) (strictFields, error) {
	raw := f[name]
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return readObject(dec)
}

func (f strictFields) str(name string) (string, error) {
	raw := f[name]
	if len(raw) == 0 || raw[0] != '"' {
		return "", strictErr(ReasonJSON)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", strictErr(ReasonJSON)
	}
	return s, nil
}

func (f strictFields) boolean(name string) (bool, error) {
	switch string(f[name]) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, strictErr(ReasonJSON)
}

// integer accepts only a plain JSON integer (no fraction, no exponent).
func integer(raw []byte) (int64, error) {
	if len(raw) == 0 || len(raw) > 19 {
		return 0, strictErr(ReasonJSON)
	}
	for i, c := range raw {
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return 0, strictErr(ReasonJSON)
		}
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, strictErr(ReasonJSON)
	}
	return n, nil
}

func (f strictFields) integer(name string) (int64, error) { return integer(f[name]) }

func (f strictFields) intArray(name string) ([]int64, error) {
	raw := f[name]
	if len(raw) == 0 || raw[0] != '[' {
		return nil, strictErr(ReasonJSON)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, strictErr(ReasonJSON)
	}
	out := make([]int64, 0, len(items))
	for _, it := range items {
		n, err := integer(it)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
