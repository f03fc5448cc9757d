package origin

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Origin is the canonical origin of a URL: lower-case scheme and host, the
// host in its ASCII (IDNA) form without a trailing dot, and the port only
// when it is not the scheme's default. Origins compare with ==.
type Origin struct {
	// Scheme is lower-case ("https").
	Scheme string
	// Host is the canonical host: ASCII, lower-case, no brackets around IPv6.
	Host string
	// Port is empty for the scheme's default port.
	Port string
}

// String returns the origin in serialised form, for example
// "https://social.example" or "http://127.0.0.1:8080".
func (o Origin) String() string {
	if o.IsZero() {
		return ""
	}
	h := o.Host
	if strings.IndexByte(h, ':') >= 0 {
		h = "[" + h + "]"
	}
	if o.Port != "" {
		return o.Scheme + "://" + h + ":" + o.Port
	}
	return o.Scheme + "://" + h
}

// IsZero reports whether o is the zero Origin.
func (o Origin) IsZero() bool { return o == Origin{} }

// MarshalText implements encoding.TextMarshaler.
func (o Origin) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (o *Origin) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*o = p
	return nil
}

// defaultPorts are elided from canonical origins.
var defaultPorts = map[string]string{"http": "80", "https": "443", "ws": "80", "wss": "443"}

// Parse returns the canonical origin of an absolute URL. It fails with an
// error wrapping ErrInvalidURL for relative or opaque URLs, a missing host,
// or a host that is neither a valid domain nor an IP literal.
func Parse(raw string) (Origin, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Origin{}, fmt.Errorf("%w: %v", ErrInvalidURL, err)
	}
	return OfURL(u)
}

// OfURL returns the canonical origin of u; see Parse.
func OfURL(u *url.URL) (Origin, error) {
	if u == nil || u.Scheme == "" || u.Opaque != "" || u.Host == "" {
		return Origin{}, fmt.Errorf("%w: not an absolute URL with a host", ErrInvalidURL)
	}
	scheme := strings.ToLower(u.Scheme)
	host, err := canonicalHost(u.Hostname())
	if err != nil {
		return Origin{}, err
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return Origin{}, fmt.Errorf("%w: bad port", ErrInvalidURL)
		}
		port = strconv.FormatUint(n, 10) // "0443" and "443" are one port
		if defaultPorts[scheme] == port {
			port = ""
		}
	}
	return Origin{Scheme: scheme, Host: host, Port: port}, nil
}

// canonicalHost normalises a host name for comparison: IP literals in their
// canonical text form, domains lower-cased, IDNA-mapped and without a
// trailing dot. Single-label names (localhost) are allowed here: origin
// comparison must work for them even though RegistrableDomain refuses them.
func canonicalHost(h string) (string, error) {
	if h == "" {
		return "", fmt.Errorf("%w: empty host", ErrInvalidURL)
	}
	if ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); ip != nil {
		return ip.String(), nil
	}
	d, err := normalizeLabels(h)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	return d, nil
}

// SameOrigin reports whether two absolute URLs have the same canonical
// origin (scheme, host and port). Anything unparsable is never the same.
func SameOrigin(a, b string) bool {
	oa, ob, ok := parseBoth(a, b)
	return ok && oa == ob
}

// SameOriginURL is SameOrigin for parsed URLs.
func SameOriginURL(a, b *url.URL) bool {
	oa, ob, ok := ofBoth(a, b)
	return ok && oa == ob
}

// SameHost reports whether two absolute URLs name the same host, whatever
// their schemes and ports, as Mastodon compares collection pages.
// Anything unparsable is never the same.
func SameHost(a, b string) bool {
	oa, ob, ok := parseBoth(a, b)
	return ok && oa.Host == ob.Host
}

// SameHostURL is SameHost for parsed URLs.
func SameHostURL(a, b *url.URL) bool {
	oa, ob, ok := ofBoth(a, b)
	return ok && oa.Host == ob.Host
}

// parseBoth parses two URLs' origins; ok is false when either fails.
func parseBoth(a, b string) (oa, ob Origin, ok bool) {
	oa, errA := Parse(a)
	ob, errB := Parse(b)
	return oa, ob, errA == nil && errB == nil
}

// ofBoth is parseBoth for parsed URLs.
func ofBoth(a, b *url.URL) (oa, ob Origin, ok bool) {
	oa, errA := OfURL(a)
	ob, errB := OfURL(b)
	return oa, ob, errA == nil && errB == nil
}

var (
	// ErrInvalidURL is returned by Parse and OfURL for a URL without a usable origin.
	ErrInvalidURL = errors.New("origin: invalid URL")
	// ErrInvalidDomain is returned when a value is not a well-formed domain name.
	ErrInvalidDomain = errors.New("origin: invalid domain")
	// ErrIPLiteral is returned when a domain was required and an IP address was given.
	ErrIPLiteral = errors.New("origin: IP literal is not a domain")
	// ErrSingleLabel is returned for single-label names such as "localhost".
	ErrSingleLabel = errors.New("origin: single-label host has no registrable domain")
	// ErrPublicSuffix is returned by RegistrableDomain when the host is itself a
	// public suffix ("co.uk", "github.io").
	ErrPublicSuffix = errors.New("origin: host is a public suffix")
)
