package client

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"testing"
)

// refusedV4Cases has an address from every refused IPv4 range.
var refusedV4Cases = []struct{ name, addr string }{
	{"this network 0/8", "0.1.2.3"},
	{"unspecified", "0.0.0.0"},
	{"private 10/8", "10.20.30.40"},
	{"shared CGNAT 100.64/10", "100.100.1.1"},
	{"loopback 127/8", "127.0.0.1"},
	{"loopback 127.255", "127.255.255.254"},
	{"link-local 169.254/16 (cloud metadata)", "169.254.169.254"},
	{"private 172.16/12", "172.31.255.1"},
	{"IETF 192.0.0/24", "192.0.0.8"},
	{"TEST-NET-1 192.0.2/24", "192.0.2.1"},
	{"AS112-v4 192.31.196/24", "192.31.196.1"},
	{"AMT 192.52.193/24", "192.52.193.1"},
	{"6to4 relay 192.88.99/24", "192.88.99.1"},
	{"private 192.168/16", "192.168.1.1"},
	{"AS112 192.175.48/24", "192.175.48.1"},
	{"benchmarking 198.18/15", "198.19.0.1"},
	{"TEST-NET-2 198.51.100/24", "198.51.100.7"},
	{"TEST-NET-3 203.0.113/24", "203.0.113.9"},
	{"multicast 224/4", "239.255.255.250"},
	{"reserved 240/4", "240.0.0.1"},
	{"broadcast", "255.255.255.255"},
}

// refusedV6Cases has an address from every refused IPv6 range.
var refusedV6Cases = []struct{ name, addr string }{
	{"unspecified ::", "::"},
	{"loopback ::1", "::1"},
	{"NAT64 64:ff9b::/96 carrying public", "64:ff9b::808:808"},
	{"NAT64 local-use 64:ff9b:1::/48", "64:ff9b:1::1"},
	{"discard 100::/64", "100::1"},
	{"Teredo 2001::/32", "2001:0:4136:e378:8000:63bf:3fff:fdd2"},
	{"ORCHID 2001:10::/28", "2001:10::1"},
	{"ORCHIDv2 2001:20::/28", "2001:20::1"},
	{"IETF 2001::/23", "2001:100::1"},
	{"documentation 2001:db8::/32", "2001:db8::1"},
	{"6to4 2002::/16 carrying public", "2002:808:808::1"},
	{"AS112-v6 2620:4f:8000::/48", "2620:4f:8000::1"},
	{"documentation 3fff::/20", "3fff::1"},
	{"unique local fc00::/7", "fd12:3456::1"},
	{"link-local fe80::/10", "fe80::1"},
	{"multicast ff00::/8", "ff02::1"},
	{"site-local fec0::/10 (outside 2000::/3)", "fec0::1"},
	{"IPv4-mapped loopback", "::ffff:127.0.0.1"},
	{"IPv4-compatible loopback (GHSA-vwhj-3g83-v276)", "::127.0.0.1"},
}

// forms returns the IPv6 spellings of an IPv4 address that must be judged
// like it (mapped, compatible) or refused whatever it is (NAT64, 6to4).
func forms(v4 netip.Addr) map[string]netip.Addr {
	b := v4.As4()
	var nat64, sixto4 [16]byte
	copy(nat64[:], netip.MustParseAddr("64:ff9b::").AsSlice())
	copy(nat64[12:], b[:])
	sixto4[0], sixto4[1] = 0x20, 0x02
	copy(sixto4[2:6], b[:])
	sixto4[15] = 1
	var compat [16]byte
	copy(compat[12:], b[:])
	return map[string]netip.Addr{
		"plain":           v4,
		"IPv4-mapped":     netip.AddrFrom16(v4.As16()),
		"IPv4-compatible": netip.AddrFrom16(compat),
		"NAT64":           netip.AddrFrom16(nat64),
		"6to4":            netip.AddrFrom16(sixto4),
	}
}

type refusedCase struct {
	name string
	addr netip.Addr
}

func allRefusedCases() []refusedCase {
	var out []refusedCase
	for _, tc := range refusedV4Cases {
		for form, a := range forms(netip.MustParseAddr(tc.addr)) {
			out = append(out, refusedCase{tc.name + "/" + form, a})
		}
	}
	for _, tc := range refusedV6Cases {
		out = append(out, refusedCase{tc.name, netip.MustParseAddr(tc.addr)})
	}
	// NAT64 and 6to4 are refused whatever they carry, a public address too.
	pub := forms(netip.MustParseAddr("8.8.8.8"))
	out = append(out, refusedCase{"public/NAT64", pub["NAT64"]}, refusedCase{"public/6to4", pub["6to4"]})
	return out
}

func literalURL(a netip.Addr) string {
	if a.Is4() {
		return "http://" + a.String() + "/inbox"
	}
	return "http://[" + a.String() + "]/inbox"
}

func TestRefusedRangesValidateURL(t *testing.T) {
	t.Parallel()
	c := setup(t, nil).c
	for _, tc := range allRefusedCases() {
		t.Run(tc.name, func(t *testing.T) {
			err := c.ValidateURL(literalURL(tc.addr))
			var be *BlockedError
			if !errors.As(err, &be) {
				t.Fatalf("ValidateURL(%s) = %v, want *BlockedError", literalURL(tc.addr), err)
			}
			if be.Addr != tc.addr || !be.Range.IsValid() {
				t.Errorf("BlockedError = %+v, want Addr %s and a range", be, tc.addr)
			}
		})
	}
}

// TestRefusedRangesRequest sends real requests to a name resolving to each
// refused address, and to each address as a literal, and checks that no
// connection was attempted.
func TestRefusedRangesRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range allRefusedCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			b.res.set("victim.example", []netip.Addr{tc.addr})
			_, err := get(t, b.c, "http://victim.example/inbox")
			var be *BlockedError
			if !errors.As(err, &be) {
				t.Fatalf("Do = %v, want *BlockedError", err)
			}
			if be.Host != "victim.example" || be.Addr != tc.addr {
				t.Errorf("BlockedError = %+v, want host victim.example, addr %s", be, tc.addr)
			}
			_, err = get(t, b.c, literalURL(tc.addr))
			if !errors.As(err, &be) || be.Addr != tc.addr {
				t.Fatalf("literal: Do = %v, want *BlockedError for %s", err, tc.addr)
			}
			if d := b.dials.list(); len(d) != 0 {
				t.Errorf("connections attempted: %v", d)
			}
		})
	}
}

func TestPublicAddressesPass(t *testing.T) {
	t.Parallel()
	c := setup(t, nil).c
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "::ffff:8.8.8.8", "::8.8.8.8",
		"2606:4700:4700::1111", "2a00:1450:4001::200e", "100.63.255.255", "100.128.0.0", "172.32.0.1", "198.20.0.1"} {
		a := netip.MustParseAddr(s)
		if r, refused := PolicyPublic.Refuses(a); refused {
			t.Errorf("%s refused (in %s)", s, r)
		}
		if err := c.ValidateURL(literalURL(a)); err != nil {
			t.Errorf("ValidateURL(%s) = %v", literalURL(a), err)
		}
	}
}

func TestPolicyNonLocal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr    string
		refused bool
	}{
		{"10.1.2.3", false},
		{"172.16.0.5", false},
		{"192.168.10.10", false},
		{"100.64.0.1", false},
		{"fd00::5", false},
		{"::ffff:10.0.0.1", false},
		{"8.8.8.8", false},
		{"127.0.0.1", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"169.254.169.254", true},
		{"fe80::1", true},
		{"0.0.0.0", true},
		{"::", true},
		{"224.0.0.1", true},
		{"ff02::1", true},
		{"255.255.255.255", true},
		{"64:ff9b::a00:1", true},
		{"2002:a00:1::1", true},
		{"192.0.2.1", true},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			_, refused := PolicyNonLocal.Refuses(netip.MustParseAddr(tc.addr))
			if refused != tc.refused {
				t.Errorf("PolicyNonLocal.Refuses(%s) = %v, want %v", tc.addr, refused, tc.refused)
			}
		})
	}
	// The same through a client, by name.
	b := setup(t, &Config{Policy: PolicyNonLocal})
	b.res.set("directory.internal", []netip.Addr{netip.MustParseAddr("10.0.0.7")})
	b.res.set("loop.internal", []netip.Addr{netip.MustParseAddr("127.0.0.1")})
	if _, err := get(t, b.c, "http://directory.internal/"); errors.Is(err, ErrBlocked) {
		t.Errorf("private address refused under PolicyNonLocal: %v", err)
	}
	if d := b.dials.list(); len(d) != 1 || d[0] != "10.0.0.7:80" {
		t.Errorf("dials = %v, want [10.0.0.7:80]", d)
	}
	if _, err := get(t, b.c, "http://loop.internal/"); !errors.Is(err, ErrBlocked) {
		t.Errorf("loopback under PolicyNonLocal: %v, want ErrBlocked", err)
	}
}

func TestAllowPrivate(t *testing.T) {
	t.Parallel()
	b := setup(t, &Config{AllowPrivate: []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"),
		netip.MustParsePrefix("64:ff9b::/96"),
	}})
	for _, s := range []string{"127.0.0.1", "::ffff:127.0.0.1", "::127.0.0.1", "64:ff9b::808:808", "64:ff9b::a00:1"} {
		if err := b.c.ValidateURL(literalURL(netip.MustParseAddr(s))); err != nil {
			t.Errorf("allowed %s: %v", s, err)
		}
	}
	for _, s := range []string{"10.0.0.1", "::1", "2002:808:808::1", "169.254.169.254"} {
		if err := b.c.ValidateURL(literalURL(netip.MustParseAddr(s))); !errors.Is(err, ErrBlocked) {
			t.Errorf("%s not in the allow list: %v, want ErrBlocked", s, err)
		}
	}
	// A client without the allow list refuses what it admits.
	if err := setup(t, nil).c.ValidateURL("http://127.0.0.1/"); !errors.Is(err, ErrBlocked) {
		t.Errorf("ValidateURL(127.0.0.1) = %v, want ErrBlocked", err)
	}
}

func TestValidateURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		url  string
		want error // nil means valid
	}{
		{"https name", "https://social.example/users/alice", nil},
		{"http name with port", "http://social.example:8080/inbox", nil},
		{"upper-case scheme", "HTTPS://social.example/", nil},
		{"trailing dot", "https://social.example./", nil},
		{"public IPv4 literal", "https://8.8.8.8/", nil},
		{"public IPv6 literal", "https://[2606:4700::1111]:443/", nil},
		{"ftp", "ftp://social.example/", ErrInvalidURL},
		{"file", "file:///etc/passwd", ErrInvalidURL},
		{"gopher", "gopher://127.0.0.1:6379/_", ErrInvalidURL},
		{"no scheme", "//social.example/", ErrInvalidURL},
		{"no host", "https:///path", ErrInvalidURL},
		{"opaque", "https:social.example", ErrInvalidURL},
		{"unparsable", "https://[::1/", ErrInvalidURL},
		{"port zero", "https://social.example:0/", ErrInvalidURL},
		{"port too large", "https://social.example:70000/", ErrInvalidURL},
		{"zone", "http://[fe80::1%25eth0]/", ErrInvalidURL},
		{"decimal IPv4", "http://2130706433/", ErrInvalidURL},
		{"short IPv4", "http://127.1/", ErrInvalidURL},
		{"hex IPv4", "http://0x7f.0.0.1/", ErrInvalidURL},
		{"octal IPv4", "http://0177.0.0.1/", ErrInvalidURL},
		{"onion", "http://abcdefghijklmnop.onion/", ErrHiddenService},
		{"onion trailing dot", "http://abc.ONION./", ErrHiddenService},
		{"i2p", "http://abc.i2p/", ErrHiddenService},
		{"loopback literal", "http://127.0.0.1:3000/", ErrBlocked},
		{"percent-encoded host", "http://%31%32%37.0.0.1/", ErrInvalidURL},
		{"mapped literal", "http://[::ffff:7f00:1]/", ErrBlocked},
		{"metadata", "http://169.254.169.254/latest/meta-data/", ErrBlocked},
	}
	c := setup(t, nil).c
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := c.ValidateURL(tc.url)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("ValidateURL(%q) = %v, want %v", tc.url, err, tc.want)
			}
		})
	}
}

func TestAllowOnion(t *testing.T) {
	t.Parallel()
	b := setup(t, &Config{AllowOnion: true})
	if err := b.c.ValidateURL("http://abcdefghijklmnop.onion/"); err != nil {
		t.Errorf("onion with AllowOnion: %v", err)
	}
	// Its addresses are still checked.
	b.res.set("abc.onion", []netip.Addr{netip.MustParseAddr("127.0.0.1")})
	if _, err := get(t, b.c, "http://abc.onion/"); !errors.Is(err, ErrBlocked) {
		t.Errorf("onion resolving to loopback: %v, want ErrBlocked", err)
	}
}

// TestDNSRebinding: a resolver that answers a public address first and
// loopback afterwards cannot make the client connect to loopback, because
// the client resolves once per connection and dials what it checked.
func TestDNSRebinding(t *testing.T) {
	t.Parallel()
	srv := server(t, okHandler("public content"))
	b := setup(t, nil)
	pub, loop := netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("127.0.0.1")
	b.res.set("rebind.example", []netip.Addr{pub}, []netip.Addr{loop})
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	b.dials.route["8.8.8.8:"+port] = srv.Listener.Addr().String()

	resp, err := get(t, b.c, "http://rebind.example:"+port+"/")
	if err != nil {
		t.Fatalf("first request: %v", err)
	}
	if _, err := ReadAll(resp); err != nil {
		t.Fatal(err)
	}
	if n := b.res.count("rebind.example"); n != 1 {
		t.Errorf("resolved %d times for one connection, want 1 (a second lookup is the rebinding window)", n)
	}
	// A new connection resolves again, now to loopback, and is refused.
	b.c.CloseIdleConnections()
	_, err = get(t, b.c, "http://rebind.example:"+port+"/")
	var be *BlockedError
	if !errors.As(err, &be) || be.Addr != loop {
		t.Fatalf("after rebinding: %v, want *BlockedError for 127.0.0.1", err)
	}
	for _, d := range b.dials.list() {
		if netip.MustParseAddrPort(d).Addr().IsLoopback() {
			t.Errorf("dialled loopback %s", d)
		}
	}
}

func TestMixedAnswerRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.res.set("mixed.example", []netip.Addr{netip.MustParseAddr("8.8.8.8"), netip.MustParseAddr("10.0.0.1")})
	if _, err := get(t, b.c, "http://mixed.example/"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("Do = %v, want ErrBlocked", err)
	}
	if d := b.dials.list(); len(d) != 0 {
		t.Errorf("connections attempted: %v", d)
	}
}

func TestControlRechecksDialledAddress(t *testing.T) {
	t.Parallel()
	c, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	for addr, refused := range map[string]bool{"127.0.0.1:80": true, "[::ffff:10.0.0.1]:443": true, "8.8.8.8:443": false} {
		err := c.control("tcp", addr, nil)
		if got := errors.Is(err, ErrBlocked); got != refused {
			t.Errorf("control(%s) = %v, want refused=%v", addr, err, refused)
		}
	}
}

func TestNoEnvironmentProxy(t *testing.T) {
	t.Parallel()
	c, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.hc.Transport.(*http.Transport).Proxy != nil {
		t.Error("transport has a Proxy function; an environment proxy would bypass the guard")
	}
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]*Config{
		"unknown policy":   {Policy: 9},
		"invalid prefix":   {AllowPrivate: []netip.Prefix{{}}},
		"negative body":    {MaxBodyBytes: -1},
		"negative timeout": {Timeout: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	if _, err := New(nil); err != nil {
		t.Errorf("New(nil) = %v", err)
	}
}
