package directory

import (
	"net/netip"
	"slices"
	"time"

	"github.com/fedkit/fedkit/client"
)

// Transport budget for Directory calls (spec section 10.1).
const (
	TimeoutDefault         = 15 * time.Second
	dialTimeout            = 5 * time.Second
	tlsHandshakeTimeout    = 5 * time.Second
	responseHeaderTimeout  = 5 * time.Second
	maxResponseHeaderBytes = 64 << 10
	maxConnsPerHost        = 2
)

// refusedV4 are the IPv4 targets the seed's Directory dial guard refuses:
// loopback, link-local, unspecified and multicast. 0.0.0.0/8 counts as
// unspecified (Linux routes 0.0.0.0 to the local host and the rest of
// 0/8 is unroutable), and the limited broadcast 255.255.255.255 as a group
// address like multicast. Everything else, private split-DNS ranges,
// 198.18.0.0/15 and 240.0.0.0/4 included, may host a Directory.
var refusedV4 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("224.0.0.0/4"),
	netip.MustParsePrefix("255.255.255.255/32"),
}

// refusedV6 are the IPv6 counterparts. NAT64 (64:ff9b::/96), 6to4
// (2002::/16) and Teredo stay allowed, so an IPv6-only relay reaches an
// IPv4-only Directory, but not when they carry a refused IPv4 address
// (embeddedV6 adds those).
var refusedV6 = []netip.Prefix{
	netip.MustParsePrefix("::/128"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("ff00::/8"),
}

// embeddedV6 are the IPv6 forms that carry an IPv4 address at a known
// offset: IPv4-compatible (::a.b.c.d, which the guard judges as a.b.c.d),
// NAT64's well-known prefix and 6to4. Their refused IPv4 contents are
// refused too.
var embeddedV6 = []struct {
	prefix netip.Prefix
	offset int // byte offset of the IPv4 address
}{
	{netip.MustParsePrefix("::/96"), 12},
	{netip.MustParsePrefix("64:ff9b::/96"), 12},
	{netip.MustParsePrefix("2002::/16"), 2},
}

// directoryAllowed is the Directory address policy as the guarded client
// expresses it: everything outside the refused ranges, handed to
// client.PolicyNonLocal as its allow list (the client package has no
// policy this narrow of its own).
var directoryAllowed = buildAllowed()

func buildAllowed() []netip.Prefix {
	holes6 := slices.Clone(refusedV6)
	for _, e := range embeddedV6 {
		for _, h := range refusedV4 {
			b := e.prefix.Addr().As16()
			v4 := h.Addr().As4()
			copy(b[e.offset:], v4[:])
			holes6 = append(holes6, netip.PrefixFrom(netip.AddrFrom16(b), e.offset*8+h.Bits()))
		}
	}
	out := subtract(netip.MustParsePrefix("0.0.0.0/0"), refusedV4)
	return append(out, subtract(netip.MustParsePrefix("::/0"), holes6)...)
}

// subtract returns the prefixes covering p minus every hole.
func subtract(p netip.Prefix, holes []netip.Prefix) []netip.Prefix {
	var inside []netip.Prefix
	for _, h := range holes {
		if h.Bits() <= p.Bits() && h.Contains(p.Addr()) {
			return nil // p lies wholly in a hole
		}
		if h.Bits() > p.Bits() && p.Contains(h.Addr()) {
			inside = append(inside, h)
		}
	}
	if len(inside) == 0 {
		return []netip.Prefix{p}
	}
	lo := netip.PrefixFrom(p.Addr(), p.Bits()+1)
	hiAddr := p.Addr().As16()
	bit := p.Bits()
	if p.Addr().Is4() {
		b4 := p.Addr().As4()
		b4[bit/8] |= 0x80 >> (bit % 8)
		return append(subtract(lo, inside), subtract(netip.PrefixFrom(netip.AddrFrom4(b4), bit+1), inside)...)
	}
	hiAddr[bit/8] |= 0x80 >> (bit % 8)
	return append(subtract(lo, inside), subtract(netip.PrefixFrom(netip.AddrFrom16(hiAddr), bit+1), inside)...)
}

// ClientConfig returns the guarded HTTP client configuration for talking
// to a Directory: the Directory address policy (loopback, unspecified,
// link-local and multicast refused, also when carried in an
// IPv4-compatible, NAT64 or 6to4 address; every other range allowed,
// private split DNS and NAT64 included), no redirects, a 16 KiB body cap,
// a 64 KiB header cap, compression off, a 15 s overall deadline and 5 s
// dial, TLS and header timeouts. Callers may add to it (a Resolver, test
// TLS roots, AllowPrivate for a loopback test server) and pass client.New's
// result as Config.HTTP.
func ClientConfig() *client.Config {
	return &client.Config{
		Policy:                 client.PolicyNonLocal,
		AllowPrivate:           slices.Clone(directoryAllowed),
		MaxBodyBytes:           MaxResponseBytes,
		MaxRedirects:           client.NoRedirects,
		Timeout:                TimeoutDefault,
		DialTimeout:            dialTimeout,
		TLSHandshakeTimeout:    tlsHandshakeTimeout,
		ResponseHeaderTimeout:  responseHeaderTimeout,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		MaxIdleConnsPerHost:    maxConnsPerHost,
		MaxConnsPerHost:        maxConnsPerHost,
		DisableCompression:     true,
	}
}

// AddressAllowed reports whether the Directory address policy (ClientConfig
// without test additions) lets a Directory be dialled at a. It judges a as
// the guarded client does: an IPv4-mapped or IPv4-compatible address by
// the IPv4 address it carries.
func AddressAllowed(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	if _, refused := client.PolicyNonLocal.Refuses(a); !refused {
		return true
	}
	plain := a.WithZone("").Unmap()
	inner := plain
	if compat := embeddedV6[0].prefix; plain.Is6() && compat.Contains(plain) {
		b := plain.As16()
		if v4 := netip.AddrFrom4([4]byte(b[12:])); v4 != netip.IPv4Unspecified() && v4 != netip.AddrFrom4([4]byte{0, 0, 0, 1}) {
			inner = v4
		}
	}
	for _, p := range directoryAllowed {
		if p.Contains(plain) || p.Contains(inner) {
			return true
		}
	}
	return false
}
