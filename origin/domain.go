package origin

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// MaxDomainBytes is the longest domain name NormalizeDomain accepts.
const MaxDomainBytes = 253

// normalizeLabels lower-cases h, trims one trailing dot, maps it to ASCII
// with IDNA and checks every label. It accepts single labels and numeric
// labels; callers that need a domain check those themselves.
func normalizeLabels(h string) (string, error) {
	h = strings.TrimSuffix(h, ".")
	if h == "" {
		return "", fmt.Errorf("%w: empty", ErrInvalidDomain)
	}
	ascii := plainASCII(h)
	if ascii {
		h = strings.ToLower(h)
	}
	// Punycode labels are validated too, so "xn--" garbage is refused.
	if !ascii || strings.Contains(h, "xn--") {
		// idna would map invalid bytes to U+FFFD and punycode them.
		if !utf8.ValidString(h) {
			return "", fmt.Errorf("%w: invalid UTF-8", ErrInvalidDomain)
		}
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("%w: %v", ErrInvalidDomain, err)
		}
		h = a
	}
	if len(h) > MaxDomainBytes {
		return "", fmt.Errorf("%w: longer than %d bytes", ErrInvalidDomain, MaxDomainBytes)
	}
	for label := range strings.SplitSeq(h, ".") {
		if err := checkLabel(label); err != nil {
			return "", err
		}
	}
	return h, nil
}

// plainASCII reports whether s holds only letters, digits, '-' and '.', so
// IDNA mapping would only lower-case it.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func checkLabel(l string) error {
	if l == "" || len(l) > 63 {
		return fmt.Errorf("%w: label length", ErrInvalidDomain)
	}
	if l[0] == '-' || l[len(l)-1] == '-' {
		return fmt.Errorf("%w: label starts or ends with a hyphen", ErrInvalidDomain)
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("%w: character %q", ErrInvalidDomain, c)
		}
	}
	return nil
}

// NormalizeDomain returns s as a canonical domain name: lower-case, IDNA
// ASCII form, no trailing dot, at least two labels, at most 253 bytes. It
// refuses IP literals (ErrIPLiteral), single labels (ErrSingleLabel) and
// anything carrying a scheme, path, port, userinfo or whitespace
// (ErrInvalidDomain).
func NormalizeDomain(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("%w: empty", ErrInvalidDomain)
	}
	if strings.ContainsAny(s, "/:@?#[] \t\r\n\\%") {
		if isIP(s) {
			return "", ErrIPLiteral
		}
		return "", fmt.Errorf("%w: not a bare domain", ErrInvalidDomain)
	}
	if isIP(s) {
		return "", ErrIPLiteral
	}
	d, err := normalizeLabels(s)
	if err != nil {
		return "", err
	}
	if isIP(d) {
		return "", ErrIPLiteral
	}
	last := d
	if i := strings.LastIndexByte(d, '.'); i >= 0 {
		last = d[i+1:]
	} else {
		return "", ErrSingleLabel
	}
	// A numeric last label makes URL parsers read the name as IPv4 ("1.2.3",
	// "0x7f.1"); no real TLD is numeric.
	if numericLabel(last) {
		return "", ErrIPLiteral
	}
	return d, nil
}

func isIP(s string) bool {
	return net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")) != nil
}

func numericLabel(l string) bool {
	if strings.HasPrefix(l, "0x") {
		l = l[2:]
		if l == "" {
			return true
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if l[i] < '0' || l[i] > '9' {
			return false
		}
	}
	return true
}

// RegistrableDomain returns the registrable domain (eTLD+1) of a host, a
// host:port or an absolute URL, after lower-casing, dropping the port and one
// trailing dot, and IDNA mapping. It refuses IP literals (ErrIPLiteral),
// single-label hosts (ErrSingleLabel), hosts that are public suffixes
// themselves (ErrPublicSuffix) and malformed names (ErrInvalidDomain).
// Callers comparing domains must deny on any error.
func RegistrableDomain(host string) (string, error) {
	h, err := hostOnly(host)
	if err != nil {
		return "", err
	}
	d, err := NormalizeDomain(h)
	if err != nil {
		return "", err
	}
	rd, err := publicsuffix.EffectiveTLDPlusOne(d)
	if err != nil {
		return "", fmt.Errorf("%w: %s", ErrPublicSuffix, d)
	}
	return rd, nil
}

// hostOnly strips a scheme, userinfo-free authority's port and path so that
// RegistrableDomain accepts what callers naturally hold.
func hostOnly(s string) (string, error) {
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("%w: bad URL", ErrInvalidDomain)
		}
		if u.User != nil {
			return "", fmt.Errorf("%w: userinfo", ErrInvalidDomain)
		}
		return u.Hostname(), nil
	}
	if isIP(s) {
		return "", ErrIPLiteral
	}
	if strings.LastIndexByte(s, ':') >= 0 {
		h, _, err := net.SplitHostPort(s)
		if err != nil {
			return "", fmt.Errorf("%w: bad host:port", ErrInvalidDomain)
		}
		return h, nil
	}
	return s, nil
}

// SameRegistrableDomain reports whether a and b (hosts, host:ports or URLs)
// have the same registrable domain. Any error means false.
func SameRegistrableDomain(a, b string) bool {
	ra, err := RegistrableDomain(a)
	if err != nil {
		return false
	}
	rb, err := RegistrableDomain(b)
	if err != nil {
		return false
	}
	return ra == rb
}
