package directory

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxURLBytes bounds every URL this package accepts.
const MaxURLBytes = 2048

// ParseOrigin checks that s is one canonical HTTPS origin and returns it.
// It refuses surrounding whitespace, credentials, a path (even "/"), a
// query or fragment, an explicit or empty port 443, upper case, a trailing
// dot, single-label hosts and non-canonical IP literals. The Directory
// itself rejects rather than normalises such values, so neither do we.
func ParseOrigin(s string) (string, error) {
	authority, rest, err := splitHTTPS(s)
	if err != nil {
		return "", err
	}
	if rest != "" {
		return "", fmt.Errorf("%w: origin has a path, query or fragment", ErrInvalidOrigin)
	}
	if err := checkAuthority(authority); err != nil {
		return "", err
	}
	return s, nil
}

// Authority returns the authority of a canonical origin (host, plus the
// port when it is not 443).
func Authority(origin string) string { return strings.TrimPrefix(origin, "https://") }

// splitHTTPS splits an https URL into its authority and the remainder.
func splitHTTPS(s string) (authority, rest string, err error) {
	if len(s) > MaxURLBytes || !utf8.ValidString(s) {
		return "", "", fmt.Errorf("%w: too long or not UTF-8", ErrInvalidOrigin)
	}
	if !strings.HasPrefix(s, "https://") {
		return "", "", fmt.Errorf("%w: scheme must be lower-case https", ErrInvalidOrigin)
	}
	s = s[len("https://"):]
	i := strings.IndexAny(s, "/?#")
	if i < 0 {
		return s, "", nil
	}
	return s[:i], s[i:], nil
}

func checkAuthority(a string) error {
	if a == "" {
		return fmt.Errorf("%w: empty host", ErrInvalidOrigin)
	}
	if strings.ContainsAny(a, "@\\ \t\r\n%") {
		return fmt.Errorf("%w: credentials or forbidden characters in authority", ErrInvalidOrigin)
	}
	host, port := a, ""
	if strings.HasPrefix(a, "[") {
		end := strings.IndexByte(a, ']')
		if end < 0 {
			return fmt.Errorf("%w: unterminated IPv6 literal", ErrInvalidOrigin)
		}
		host, port = a[:end+1], a[end+1:]
		if port != "" {
			if port[0] != ':' {
				return fmt.Errorf("%w: junk after IPv6 literal", ErrInvalidOrigin)
			}
			port = port[1:]
			if err := checkPort(port); err != nil {
				return err
			}
		}
		ip, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !ip.Is6() || ip.Zone() != "" || ip.Is4In6() || ip.String() != host[1:len(host)-1] {
			return fmt.Errorf("%w: non-canonical IPv6 literal", ErrInvalidOrigin)
		}
		return nil
	}
	if i := strings.LastIndexByte(a, ':'); i >= 0 {
		host, port = a[:i], a[i+1:]
		if err := checkPort(port); err != nil {
			return err
		}
	}
	return checkHost(host)
}

func checkPort(p string) error {
	if p == "" {
		return fmt.Errorf("%w: empty port", ErrInvalidOrigin)
	}
	if p[0] == '0' {
		return fmt.Errorf("%w: non-canonical port", ErrInvalidOrigin)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != p {
		return fmt.Errorf("%w: invalid port", ErrInvalidOrigin)
	}
	if n == 443 {
		return fmt.Errorf("%w: explicit port 443", ErrInvalidOrigin)
	}
	return nil
}

// checkHost accepts a lower-case ASCII FQDN of at least two labels or a
// canonical dotted IPv4 literal.
func checkHost(h string) error {
	if ip, err := netip.ParseAddr(h); err == nil {
		if !ip.Is4() || ip.String() != h {
			return fmt.Errorf("%w: non-canonical IP literal", ErrInvalidOrigin)
		}
		return nil
	}
	if len(h) > 253 {
		return fmt.Errorf("%w: host too long", ErrInvalidOrigin)
	}
	labels := strings.Split(h, ".")
	if len(labels) < 2 {
		return fmt.Errorf("%w: single-label or dotted host", ErrInvalidOrigin)
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("%w: invalid host label", ErrInvalidOrigin)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("%w: host must be lower-case ASCII (IDN as A-labels)", ErrInvalidOrigin)
			}
		}
	}
	// An all-numeric final label would be read as an IPv4 address by someone.
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" {
		return fmt.Errorf("%w: numeric top-level label", ErrInvalidOrigin)
	}
	return nil
}

// checkActor validates a relay actor URL against its public base URL:
// same origin, an absolute path with canonical escapes and no empty or dot
// segments, no query or fragment.
func checkActor(actor, base string) error {
	if _, err := ParseOrigin(base); err != nil {
		return fmt.Errorf("%w: public base URL: %w", ErrConfig, err)
	}
	if !strings.HasPrefix(actor, base+"/") {
		return fmt.Errorf("%w: relay actor must share the public base URL's origin", ErrConfig)
	}
	if err := checkPath(actor[len(base):], true); err != nil {
		return fmt.Errorf("%w: relay actor: %w", ErrConfig, err)
	}
	return nil
}

// checkPath checks an absolute path. Canonical percent-escapes are allowed
// only when escapes is set, and never %2F or %25.
func checkPath(p string, escapes bool) error {
	if len(p) > MaxURLBytes || !utf8.ValidString(p) || !strings.HasPrefix(p, "/") {
		return fmt.Errorf("%w: path must be absolute UTF-8", ErrInvalidOrigin)
	}
	if strings.ContainsAny(p, "?#\\") {
		return fmt.Errorf("%w: query, fragment or backslash in path", ErrInvalidOrigin)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == ' ' {
			return fmt.Errorf("%w: control character or space in path", ErrInvalidOrigin)
		}
	}
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			continue
		}
		if !escapes || i+2 >= len(p) || !isUpperHex(p[i+1]) || !isUpperHex(p[i+2]) {
			return fmt.Errorf("%w: non-canonical percent-escape", ErrInvalidOrigin)
		}
		v, _ := strconv.ParseUint(p[i+1:i+3], 16, 8)
		if v == '/' || v == '%' || isUnreserved(byte(v)) {
			return fmt.Errorf("%w: non-canonical percent-escape", ErrInvalidOrigin)
		}
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%w: empty or dot segment", ErrInvalidOrigin)
		}
	}
	return nil
}

func isUpperHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// checkProfileURL accepts the conservative subset of canonical HTTPS URLs
// the reference client sends: a canonical origin, optionally a path with
// no %, no empty (//) or dot segments, and no query or fragment.
func checkProfileURL(s string) error {
	authority, rest, err := splitHTTPS(s)
	if err != nil {
		return err
	}
	if err := checkAuthority(authority); err != nil {
		return err
	}
	if rest == "" || rest == "/" {
		return nil
	}
	return checkPath(strings.TrimSuffix(rest, "/"), false)
}
