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

// directoryAllowed are the ranges the Directory address policy admits on
// top of client.PolicyNonLocal's private ranges: the documentation ranges,
// which split-DNS and test deployments use as stand-ins for real networks.
// Loopback, unspecified, link-local and multicast stay refused.
var directoryAllowed = []netip.Prefix{
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("2001:db8::/32"),
}

// ClientConfig returns the guarded HTTP client configuration for talking
// to a Directory: the Directory address policy (loopback, unspecified,
// link-local and multicast refused; private ranges allowed for split DNS),
// no redirects, a 16 KiB body cap, a 64 KiB header cap, compression off, a
// 15 s overall deadline and 5 s dial, TLS and header timeouts. Callers may
// add to it (a Resolver, test TLS roots, AllowPrivate for a loopback test
// server) and pass client.New's result as Config.HTTP.
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
// without test additions) lets a Directory be dialled at a.
func AddressAllowed(a netip.Addr) bool {
	if _, refused := client.PolicyNonLocal.Refuses(a); !refused {
		return true
	}
	a = a.Unmap()
	for _, p := range directoryAllowed {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
