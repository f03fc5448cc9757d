package identity

import (
	"errors"
	"fmt"
	"strings"
)

// Limits from the atproto identifier specifications.
const (
	maxDIDLen    = 2048
	maxHandleLen = 253
	plcIDLen     = 24
)

// HandleInvalid is the placeholder atproto uses for a handle that failed
// verification; it is never a usable handle.
const HandleInvalid Handle = "handle.invalid"

// DID is a decentralised identifier of one of the two methods atproto
// accepts: did:plc and did:web. The zero value is no DID.
type DID string

// ParseDID parses s as a did:plc or did:web identifier. Any other method or
// a malformed value is an *InvalidIdentifierError wrapping ErrInvalidDID.
func ParseDID(s string) (DID, error) {
	if err := checkDID(s); err != nil {
		return "", &InvalidIdentifierError{Kind: "did", Reason: err.Error()}
	}
	return DID(s), nil
}

func checkDID(s string) error {
	if len(s) > maxDIDLen {
		return errors.New("too long")
	}
	switch {
	case strings.HasPrefix(s, "did:plc:"):
		id := s[len("did:plc:"):]
		if len(id) != plcIDLen {
			return errors.New("did:plc identifier must be 24 characters")
		}
		for i := 0; i < len(id); i++ {
			c := id[i]
			if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
				return errors.New("did:plc identifier must be base32 (a-z, 2-7)")
			}
		}
		return nil
	case strings.HasPrefix(s, "did:web:"):
		host := s[len("did:web:"):]
		// Ports (%3A) and paths (:) are not accepted: atproto uses
		// hostname-level did:web only, and ports are for local development.
		if strings.ContainsAny(host, ":%") {
			return errors.New("did:web must name a bare hostname")
		}
		if host != strings.ToLower(host) {
			return errors.New("did:web hostname must be lower case")
		}
		if err := checkHostname(host); err != nil {
			return fmt.Errorf("did:web: %v", err)
		}
		return nil
	default:
		return errors.New("method must be plc or web")
	}
}

// Method returns "plc" or "web", or "" for the zero DID.
func (d DID) Method() string {
	switch {
	case strings.HasPrefix(string(d), "did:plc:"):
		return "plc"
	case strings.HasPrefix(string(d), "did:web:"):
		return "web"
	}
	return ""
}

// String returns the DID as text.
func (d DID) String() string { return string(d) }

// IsZero reports whether d is the zero DID.
func (d DID) IsZero() bool { return d == "" }

// MarshalText implements encoding.TextMarshaler.
func (d DID) MarshalText() ([]byte, error) { return []byte(d), nil }

// UnmarshalText implements encoding.TextUnmarshaler; it validates like ParseDID.
// Empty text gives the zero DID.
func (d *DID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*d = ""
		return nil
	}
	v, err := ParseDID(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Handle is an atproto handle, a DNS hostname, held in lower case. The zero
// value is no handle.
type Handle string

// ParseHandle parses s as a handle and normalises it to lower case. It checks
// syntax only: reserved TLDs and handle.invalid parse but never resolve.
func ParseHandle(s string) (Handle, error) {
	if err := checkHostname(s); err != nil {
		return "", &InvalidIdentifierError{Kind: "handle", Reason: err.Error()}
	}
	return Handle(strings.ToLower(s)), nil
}

// checkHostname applies the atproto handle grammar: ASCII labels of 1-63
// letters, digits and inner hyphens, at least two labels, at most 253
// bytes, and a TLD that does not start with a digit.
func checkHostname(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	if len(s) > maxHandleLen {
		return errors.New("too long")
	}
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return errors.New("needs at least two labels")
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return errors.New("label must be 1 to 63 characters")
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return errors.New("label must not start or end with a hyphen")
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return errors.New("label has a character outside a-z, 0-9 and hyphen")
			}
		}
	}
	if tld := labels[len(labels)-1]; tld[0] >= '0' && tld[0] <= '9' {
		return errors.New("top-level domain must not start with a digit")
	}
	return nil
}

// reservedTLDs never resolve (indigo's AllowedTLD); .test stays allowed for
// test networks.
var reservedTLDs = map[string]bool{
	"local": true, "arpa": true, "invalid": true, "localhost": true,
	"internal": true, "example": true, "onion": true, "alt": true,
}

// Resolvable reports whether h may be resolved: not zero, not
// handle.invalid and not under a reserved TLD.
func (h Handle) Resolvable() bool {
	if h.IsZero() || h == HandleInvalid {
		return false
	}
	tld := string(h)
	if i := strings.LastIndexByte(tld, '.'); i >= 0 {
		tld = tld[i+1:]
	}
	return !reservedTLDs[tld]
}

// String returns the handle as text.
func (h Handle) String() string { return string(h) }

// IsZero reports whether h is the zero handle.
func (h Handle) IsZero() bool { return h == "" }

// MarshalText implements encoding.TextMarshaler.
func (h Handle) MarshalText() ([]byte, error) { return []byte(h), nil }

// UnmarshalText implements encoding.TextUnmarshaler; it validates and
// normalises like ParseHandle. Empty text gives the zero handle.
func (h *Handle) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*h = ""
		return nil
	}
	v, err := ParseHandle(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}
