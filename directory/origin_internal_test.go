package directory

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/client"
)

func TestParseOrigin(t *testing.T) {
	t.Parallel()
	valid := []string{
		"https://directory.example", "https://directory.argentwolf.org", "https://xn--bcher-kva.example",
		"https://dir.example:8443", "https://192.0.2.1", "https://[2001:db8::1]", "https://[2001:db8::1]:8443",
		"https://a-b.example",
	}
	invalid := []string{
		"", "http://directory.example", "HTTPS://directory.example", "https://Directory.example",
		"https://directory.example/", "https://directory.example/path", "https://directory.example?x",
		"https://directory.example?", "https://directory.example#f", "https://directory.example:443",
		"https://directory.example:", "https://directory.example:0443", "https://directory.example:99999",
		"https://user@directory.example", "https://user:pw@directory.example", " https://directory.example",
		"https://directory.example ", "https://directory.example.", "https://localhost", "https://bücher.example",
		"https://-a.example", "https://a-.example", "https://a..example", "https://1.2.3", "https://[2001:DB8::1]",
		"https://[2001:db8:0::1]", "https://[fe80::1%eth0]", "https://01.2.3.4", "https://[::ffff:192.0.2.1]",
		"https://dir_ectory.example", "https://directory.example\\x", "https://" + strings.Repeat("a", 2100) + ".example",
		"https://dir%2Eexample.com",
	}
	for _, s := range valid {
		if _, err := ParseOrigin(s); err != nil {
			t.Errorf("ParseOrigin(%q) = %v, want ok", s, err)
		}
	}
	for _, s := range invalid {
		if _, err := ParseOrigin(s); err == nil {
			t.Errorf("ParseOrigin(%q) accepted", s)
		}
	}
}

// TestCheckActor: construction rejects non-canonical identities (spec 2.2).
func TestCheckActor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		actor, base string
		ok          bool
	}{
		{"https://relay.example/actor", "https://relay.example", true},
		{"https://relay.example/users/relay", "https://relay.example", true},
		{"https://relay.example:8443/actor", "https://relay.example:8443", true},
		{"https://relay.example/a%20b", "https://relay.example", true},
		{"https://relay.example/actor", "https://relay.example/", false},
		{"https://relay.example/actor", "https://other.example", false},
		{"https://relay.example", "https://relay.example", false},
		{"https://relay.example/", "https://relay.example", false},
		{"https://relay.example/actor/", "https://relay.example", false},
		{"https://relay.example//actor", "https://relay.example", false},
		{"https://relay.example/./actor", "https://relay.example", false},
		{"https://relay.example/../actor", "https://relay.example", false},
		{"https://relay.example/a%2Fb", "https://relay.example", false},
		{"https://relay.example/a%25b", "https://relay.example", false},
		{"https://relay.example/a%2fb", "https://relay.example", false},
		{"https://relay.example/a%41", "https://relay.example", false},
		{"https://relay.example/a\\b", "https://relay.example", false},
		{"https://relay.example/a\x01", "https://relay.example", false},
		{"https://relay.example/a\xff", "https://relay.example", false},
		{"https://relay.example/actor?x=1", "https://relay.example", false},
		{"https://relay.example/actor#frag", "https://relay.example", false},
		{"http://relay.example/actor", "http://relay.example", false},
		{"https://RELAY.example/actor", "https://RELAY.example", false},
	}
	for _, tc := range cases {
		err := checkActor(tc.actor, tc.base)
		if (err == nil) != tc.ok {
			t.Errorf("checkActor(%q, %q) = %v, want ok=%v", tc.actor, tc.base, err, tc.ok)
		}
	}
}

func TestCheckKeyID(t *testing.T) {
	t.Parallel()
	a := "https://relay.example/actor"
	cases := []struct {
		keyID string
		ok    bool
	}{
		{a + "#main-key", true},
		{a + "#k1", true},
		{"", false},
		{" " + a + "#main-key", false},
		{a + "#main-key ", false},
		{a, false},
		{a + "#", false},
		{a + "#main key", false},
		{a + "#" + strings.Repeat("k", 129), false},
		{"https://relay.example/other#main-key", false},
	}
	for _, tc := range cases {
		if err := checkKeyID(tc.keyID, a); (err == nil) != tc.ok {
			t.Errorf("checkKeyID(%q) = %v, want ok=%v", tc.keyID, err, tc.ok)
		}
	}
}

// TestAddressPolicy: the Directory dial guard of the seed and spec section
// 10.1 refuses loopback, link-local, unspecified and multicast targets and
// nothing else: private split DNS, NAT64 (so an IPv6-only relay reaches an
// IPv4-only Directory), 198.18/15, 240/4, 6to4 and Teredo are dialled.
func TestAddressPolicy(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, addr string
		allowed    bool
	}{
		{"loopback v4", "127.0.0.1", false},
		{"loopback v4 range", "127.1.2.3", false},
		{"loopback v6", "::1", false},
		{"unspecified v4", "0.0.0.0", false},
		{"this network 0/8", "0.1.2.3", false},
		{"unspecified v6", "::", false},
		{"link-local v4 (metadata)", "169.254.169.254", false},
		{"link-local v6", "fe80::1", false},
		{"multicast v4", "224.0.0.1", false},
		{"multicast v4 SSDP", "239.255.255.250", false},
		{"multicast v6", "ff02::1", false},
		{"limited broadcast", "255.255.255.255", false},
		{"mapped loopback", "::ffff:127.0.0.1", false},
		{"compatible loopback", "::127.0.0.1", false},
		{"NAT64 of loopback", "64:ff9b::7f00:1", false},
		{"NAT64 of link-local", "64:ff9b::a9fe:a9fe", false},
		{"6to4 of loopback", "2002:7f00:1::1", false},
		{"private 10/8", "10.0.0.1", true},
		{"private 172.16/12", "172.16.5.4", true},
		{"private 172.16/12 top", "172.31.255.255", true},
		{"private 192.168/16", "192.168.1.1", true},
		{"CGNAT", "100.64.0.1", true},
		{"ULA", "fd00::1", true},
		{"documentation v6", "2001:db8::1", true},
		{"documentation 203.0.113/24", "203.0.113.7", true},
		{"documentation 198.51.100/24", "198.51.100.1", true},
		{"documentation 192.0.2/24", "192.0.2.1", true},
		{"public v4", "93.184.216.34", true},
		{"public v6", "2606:4700::1111", true},
		{"NAT64 well-known prefix", "64:ff9b::5db8:d822", true},
		{"NAT64 local-use prefix", "64:ff9b:1::5db8:d822", true},
		{"benchmarking 198.18/15", "198.18.0.1", true},
		{"reserved 240/4", "240.0.0.1", true},
		{"6to4", "2002:5db8:d822::1", true},
		{"Teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2", true},
		{"mapped private", "::ffff:10.0.0.1", true},
		{"site-local (deprecated)", "fec0::1", true},
	}
	for _, tc := range cases {
		if got := AddressAllowed(netip.MustParseAddr(tc.addr)); got != tc.allowed {
			t.Errorf("%s: AddressAllowed(%s) = %v, want %v", tc.name, tc.addr, got, tc.allowed)
		}
	}
	if AddressAllowed(netip.Addr{}) {
		t.Error("the zero Addr is allowed")
	}
}

// TestGuardRefusesOnlyWhatPolicySays: the guarded client built from
// ClientConfig blocks the refused targets before any connection (a
// resolver hands it the address; nothing is dialled), so the allow list
// and AddressAllowed agree on them.
func TestGuardRefusesOnlyWhatPolicySays(t *testing.T) {
	t.Parallel()
	for _, a := range []string{"127.0.0.1", "::1", "0.0.0.0", "169.254.169.254", "fe80::1", "ff02::1", "224.0.0.1",
		"::127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1", "255.255.255.255"} {
		cfg := ClientConfig()
		cfg.Resolver = fixedResolver{netip.MustParseAddr(a)}
		hc, err := client.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, "https://directory.example/v1/status", nil)
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, client.ErrBlocked) {
			t.Errorf("%s: err = %v, want client.ErrBlocked", a, err)
		}
	}
}

type fixedResolver []netip.Addr

func (r fixedResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return r, nil
}

// TestAllowListAvoidsHoles: no allow-list prefix reaches into a refused
// range, at either end of it, and the allow list leaves no gap elsewhere.
func TestAllowListAvoidsHoles(t *testing.T) {
	t.Parallel()
	last := func(p netip.Prefix) netip.Addr {
		b := p.Masked().Addr().AsSlice()
		for i := p.Bits(); i < len(b)*8; i++ {
			b[i/8] |= 0x80 >> (i % 8)
		}
		a, _ := netip.AddrFromSlice(b)
		return a
	}
	for _, h := range append(slices.Clone(refusedV4), refusedV6...) {
		for _, a := range []netip.Addr{h.Addr(), last(h)} {
			for _, p := range directoryAllowed {
				if p.Contains(a) {
					t.Errorf("allow prefix %s contains refused %s (%s)", p, a, h)
				}
			}
		}
		// (::2 onwards is IPv4-compatible 0.0.0.2, refused as 0/8.)
		if next := last(h).Next(); next.IsValid() && !embeddedV6[0].prefix.Contains(next) && !AddressAllowed(next) && !slices.ContainsFunc(append(slices.Clone(refusedV4), refusedV6...), func(q netip.Prefix) bool { return q.Contains(next) }) {
			t.Errorf("%s, just past %s, is refused", next, h)
		}
	}
}
