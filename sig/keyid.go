package sig

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxKeyIDBytes bounds a key ID; the Directory server uses the same limit.
const MaxKeyIDBytes = 2048

// KeyID identifies a verification key, usually an actor URL with a
// fragment such as "https://relay.example/actor#main-key". The zero value
// is the absent key ID.
type KeyID struct{ s string }

// ParseKeyID checks s: non-empty, at most MaxKeyIDBytes, valid UTF-8,
// no surrounding whitespace, no control characters, quotes or backslashes. It does not require
// a URL, since some servers use other identifiers.
func ParseKeyID(s string) (KeyID, error) {
	switch {
	case s == "":
		return KeyID{}, fmt.Errorf("%w: empty key ID", ErrMalformed)
	case len(s) > MaxKeyIDBytes:
		return KeyID{}, fmt.Errorf("%w: key ID of %d bytes", ErrMalformed, len(s))
	case !utf8.ValidString(s):
		return KeyID{}, fmt.Errorf("%w: key ID is not UTF-8", ErrMalformed)
	case strings.TrimSpace(s) != s:
		return KeyID{}, fmt.Errorf("%w: key ID has surrounding whitespace", ErrMalformed)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return KeyID{}, fmt.Errorf("%w: key ID has a control character", ErrMalformed)
		}
		// A URL never holds these unescaped, and cavage cannot quote them.
		if r == '"' || r == '\\' {
			return KeyID{}, fmt.Errorf("%w: key ID has a quote or backslash", ErrMalformed)
		}
	}
	return KeyID{s}, nil
}

// String returns the key ID as given.
func (k KeyID) String() string { return k.s }

// IsZero reports whether k is the zero KeyID.
func (k KeyID) IsZero() bool { return k.s == "" }

// Document returns the key ID without its fragment: the document (usually
// the actor) to fetch to find the key.
func (k KeyID) Document() string {
	if i := strings.IndexByte(k.s, '#'); i >= 0 {
		return k.s[:i]
	}
	return k.s
}

// MarshalText implements encoding.TextMarshaler.
func (k KeyID) MarshalText() ([]byte, error) { return []byte(k.s), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseKeyID's rules.
func (k *KeyID) UnmarshalText(b []byte) error {
	v, err := ParseKeyID(string(b))
	if err != nil {
		return err
	}
	*k = v
	return nil
}
