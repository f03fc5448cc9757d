package client

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Policy selects which address ranges a Client refuses. Config.AllowPrivate
// admits chosen networks on top of either policy.
type Policy uint8

const (
	// PolicyPublic admits only public unicast addresses: it refuses every
	// range of Mastodon's PrivateAddressCheck and the GoToSocial and Fedify
	// extras, and any IPv6 address outside 2000::/3. It is the default, for
	// talking to the fediverse.
	PolicyPublic Policy = iota
	// PolicyNonLocal also admits the private ranges (10/8, 172.16/12,
	// 192.168/16, 100.64/10, fc00::/7), for services reached over split DNS
	// inside a deployment, such as a Directory. Everything else PolicyPublic
	// refuses stays refused: loopback, link-local, unspecified, multicast,
	// reserved, documentation, NAT64, 6to4 and Teredo.
	PolicyNonLocal
)

// PolicyDefault is the zero Policy.
const PolicyDefault = PolicyPublic

// String returns the policy's name.
func (p Policy) String() string {
	switch p {
	case PolicyPublic:
		return "public"
	case PolicyNonLocal:
		return "nonlocal"
	}
	return "unknown"
}

// rangeEntry is one refused range; private ranges are the ones
// PolicyNonLocal admits.
type rangeEntry struct {
	prefix  netip.Prefix
	private bool
}

func mp(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// refusedV4 is judged on every IPv4 address, including those unwrapped from
// IPv4-mapped and IPv4-compatible IPv6 addresses.
var refusedV4 = []rangeEntry{
	{mp("0.0.0.0/8"), false},
	{mp("10.0.0.0/8"), true},
	{mp("100.64.0.0/10"), true},
	{mp("127.0.0.0/8"), false},
	{mp("169.254.0.0/16"), false},
	{mp("172.16.0.0/12"), true},
	{mp("192.0.0.0/24"), false},
	{mp("192.0.2.0/24"), false},
	{mp("192.31.196.0/24"), false},
	{mp("192.52.193.0/24"), false},
	{mp("192.88.99.0/24"), false},
	{mp("192.168.0.0/16"), true},
	{mp("192.175.48.0/24"), false},
	{mp("198.18.0.0/15"), false},
	{mp("198.51.100.0/24"), false},
	{mp("203.0.113.0/24"), false},
	{mp("224.0.0.0/4"), false},
	{mp("240.0.0.0/4"), false}, // includes 255.255.255.255
}

// refusedV6 lists the IPv6 ranges by name, for diagnostics; the 2000::/3
// rule in classify catches the rest. NAT64, 6to4 and Teredo are refused
// whatever IPv4 address they carry.
var refusedV6 = []rangeEntry{
	{mp("::/128"), false},
	{mp("::1/128"), false},
	{mp("64:ff9b::/96"), false},
	{mp("64:ff9b:1::/48"), false},
	{mp("100::/64"), false},
	{mp("2001::/32"), false},
	{mp("2001:10::/28"), false},
	{mp("2001:20::/28"), false},
	{mp("2001::/23"), false},
	{mp("2001:db8::/32"), false},
	{mp("2002::/16"), false},
	{mp("2620:4f:8000::/48"), false},
	{mp("3fff::/20"), false},
	{mp("fc00::/7"), true},
	{mp("fe80::/10"), false},
	{mp("ff00::/8"), false},
}

var (
	globalUnicastV6 = mp("2000::/3")
	// notGlobalV6 names the refusal of an IPv6 address outside 2000::/3
	// that no listed range covers, such as fec0::/10.
	notGlobalV6 = mp("::/0")
	compatV6    = mp("::/96")
)

// unwrap returns the IPv4 address carried by an IPv4-mapped or
// IPv4-compatible IPv6 address, and a unchanged otherwise. Go's Unmap does not
// handle the compatible form (::a.b.c.d), which Mastodon's GHSA-vwhj-3g83-v276
// was about.
func unwrap(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() && a.Zone() == "" && compatV6.Contains(a) {
		b := a.As16()
		v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		// :: and ::1 are the IPv6 unspecified and loopback addresses, not
		// compatible ones; they stay IPv6 and match their own rows.
		if v4 != netip.IPv4Unspecified() && v4 != netip.AddrFrom4([4]byte{0, 0, 0, 1}) {
			return v4
		}
	}
	return a
}

// Refuses reports whether p refuses a, and the range that refused it. IPv4-mapped
// and IPv4-compatible addresses are judged as the IPv4 address they carry. An
// invalid address is refused with the zero prefix.
func (p Policy) Refuses(a netip.Addr) (netip.Prefix, bool) {
	if !a.IsValid() {
		return netip.Prefix{}, true
	}
	a = unwrap(a).WithZone("")
	table := refusedV6
	if a.Is4() {
		table = refusedV4
	}
	for _, r := range table {
		if r.prefix.Contains(a) {
			if r.private && p == PolicyNonLocal {
				return netip.Prefix{}, false
			}
			return r.prefix, true
		}
	}
	if a.Is6() && !globalUnicastV6.Contains(a) {
		return notGlobalV6, true
	}
	return netip.Prefix{}, false
}

// guard is a Client's rule for URLs and addresses: a policy, an allow
// list, and whether hidden-service hosts are allowed.
type guard struct {
	policy     Policy
	allow      []netip.Prefix
	allowOnion bool
}

// check returns the refused range for a, or ok. An allow-listed address is
// admitted whether it matches as written or as the IPv4 address it carries.
func (g *guard) check(a netip.Addr) (netip.Prefix, bool) {
	r, refused := g.policy.Refuses(a)
	if !refused {
		return netip.Prefix{}, true
	}
	if len(g.allow) > 0 && a.IsValid() {
		plain := a.WithZone("").Unmap()
		inner := unwrap(plain)
		for _, p := range g.allow {
			if p.Contains(plain) || p.Contains(inner) {
				return netip.Prefix{}, true
			}
		}
	}
	return r, false
}

// ValidateURL checks rawURL as Do checks a request's URL, without sending
// anything: scheme http or https, a host, no hidden-service host unless
// Config.AllowOnion, and an IP literal that Config.Policy and
// Config.AllowPrivate admit. Host names are not resolved; the client
// checks their addresses when it connects.
func (c *Client) ValidateURL(rawURL string) error {
	u, err := parseURL(rawURL)
	if err != nil {
		return err
	}
	return c.guard.checkURL(u)
}

// parseURL parses rawURL, keeping the error's echo of the input bounded.
func parseURL(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: %s", ErrInvalidURL, bounded(err.Error()))
	}
	return u, nil
}

// checkURL checks u without resolving its host: the rules of
// Client.ValidateURL.
func (g *guard) checkURL(u *url.URL) error {
	// url.Parse keeps the scheme's case; lower-casing only when needed saves
	// an allocation on every request.
	if sc := u.Scheme; sc != "http" && sc != "https" {
		if sc = strings.ToLower(sc); sc != "http" && sc != "https" {
			return fmt.Errorf("%w: scheme %q", ErrInvalidURL, bounded(u.Scheme))
		}
	}
	if u.Opaque != "" {
		return fmt.Errorf("%w: opaque URL", ErrInvalidURL)
	}
	host, port := splitHostPort(u.Host)
	if host == "" {
		return fmt.Errorf("%w: no host", ErrInvalidURL)
	}
	if p := port; p != "" {
		if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
			return fmt.Errorf("%w: port %q", ErrInvalidURL, bounded(p))
		}
	}
	if strings.HasPrefix(u.Host, "[") || strings.Contains(host, ":") {
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return fmt.Errorf("%w: IPv6 literal %q", ErrInvalidURL, bounded(host))
		}
		if a.Zone() != "" {
			return fmt.Errorf("%w: zone in IP literal", ErrInvalidURL)
		}
		return g.checkLiteral(host, a)
	}
	if looksIPv4(host) {
		if a, err := netip.ParseAddr(host); err == nil {
			return g.checkLiteral(host, a)
		}
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if name == "" || hasBadHostByte(name) {
		return fmt.Errorf("%w: host %q", ErrInvalidURL, bounded(host))
	}
	// A last label that is numeric is no DNS name (no top-level domain is
	// numeric) but some resolvers read it as an IPv4 address in a shorthand
	// form (127.1, 0x7f.1, 2130706433); refuse it rather than guess.
	last := name[strings.LastIndexByte(name, '.')+1:]
	if last != "" && (isDigits(last) || strings.HasPrefix(last, "0x")) {
		return fmt.Errorf("%w: numeric host %q", ErrInvalidURL, bounded(host))
	}
	if !g.allowOnion && (strings.HasSuffix(name, ".onion") || strings.HasSuffix(name, ".i2p") || name == "onion" || name == "i2p") {
		return fmt.Errorf("%w: %s", ErrHiddenService, bounded(host))
	}
	return nil
}

func (g *guard) checkLiteral(host string, a netip.Addr) error {
	if r, ok := g.check(a); !ok {
		return &BlockedError{Host: host, Addr: a, Range: r}
	}
	return nil
}

// splitHostPort splits a URL's host as url.URL's Hostname and Port do, in
// one pass instead of two.
func splitHostPort(hostPort string) (host, port string) {
	host = hostPort
	if i := strings.LastIndexByte(host, ':'); i >= 0 && (i == len(host)-1 || isDigits(host[i+1:])) {
		host, port = host[:i], host[i+1:]
	}
	if len(host) >= 2 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	return host, port
}

// hasBadHostByte reports whether a host name holds a byte no host name has:
// space, tab, CR, LF, '/', '\\', '%' or '@'.
func hasBadHostByte(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n', '/', '\\', '%', '@':
			return true
		}
	}
	return false
}

// looksIPv4 spares host names a failing ParseAddr, whose error allocates.
func looksIPv4(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' {
			return false
		}
	}
	return s != ""
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
