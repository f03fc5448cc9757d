package client

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func FuzzValidateURL(f *testing.F) {
	for _, s := range []string{
		"https://social.example/users/alice", "http://127.0.0.1/", "http://[::ffff:127.0.0.1]/",
		"http://[::127.0.0.1]/", "http://[64:ff9b::7f00:1]/", "http://[2002:7f00:1::1]/",
		"http://2130706433/", "http://0x7f.1/", "http://abc.onion/", "gopher://x/", "https://[fe80::1%25eth0]/",
		"https://8.8.8.8:443/", "HTTP://EXAMPLE.COM./", "http://a@b@c/", "http://[::1]:0/", "",
	} {
		f.Add(s)
	}
	c := setup(f, nil).c
	f.Fuzz(func(t *testing.T, raw string) {
		err := c.ValidateURL(raw)
		if err == nil {
			u, perr := url.Parse(raw)
			if perr != nil {
				t.Fatalf("accepted unparsable %q", raw)
			}
			if s := strings.ToLower(u.Scheme); s != "http" && s != "https" || u.Hostname() == "" {
				t.Fatalf("accepted %q: scheme %q host %q", raw, u.Scheme, u.Hostname())
			}
			if a, perr := netip.ParseAddr(u.Hostname()); perr == nil {
				if r, refused := PolicyPublic.Refuses(a); refused {
					t.Fatalf("accepted literal %s in refused range %s", a, r)
				}
			}
			return
		}
		if !errors.Is(err, ErrInvalidURL) && !errors.Is(err, ErrBlocked) && !errors.Is(err, ErrHiddenService) {
			t.Fatalf("ValidateURL(%q) = %v: not a classified error", raw, err)
		}
		if len(err.Error()) > 1024 {
			t.Fatalf("error text of %d bytes: remote input must be bounded", len(err.Error()))
		}
	})
}

// FuzzRefuses checks the classification's invariants on any 16-byte address.
func FuzzRefuses(f *testing.F) {
	for _, s := range []string{"::ffff:127.0.0.1", "::127.0.0.1", "64:ff9b::808:808", "2002:808:808::1",
		"2606:4700::1111", "::", "::1", "fd00::1", "fe80::1", "::ffff:8.8.8.8", "2001::1"} {
		b := netip.MustParseAddr(s).As16()
		f.Add(b[:])
	}
	nat64, sixto4, teredo := netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("2002::/16"), netip.MustParsePrefix("2001::/32")
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) != 16 && len(raw) != 4 {
			return
		}
		a, _ := netip.AddrFromSlice(raw)
		pr, pub := PolicyPublic.Refuses(a)
		_, nonlocal := PolicyNonLocal.Refuses(a)
		if nonlocal && !pub {
			t.Fatalf("%s: PolicyNonLocal refuses what PolicyPublic admits", a)
		}
		if pub && !pr.IsValid() {
			t.Fatalf("%s refused without a range", a)
		}
		if pub && !pr.Contains(unwrap(a)) {
			t.Fatalf("%s refused by %s, which does not contain it", a, pr)
		}
		if (nat64.Contains(a) || sixto4.Contains(a) || teredo.Contains(a)) && (!pub || !nonlocal) {
			t.Fatalf("%s: NAT64/6to4/Teredo admitted", a)
		}
		if a.Is4() {
			// Mapped and compatible spellings are judged as the IPv4 address.
			b := a.As4()
			mapped := netip.AddrFrom16(a.As16())
			var c [16]byte
			copy(c[12:], b[:])
			compat := netip.AddrFrom16(c)
			for _, v := range []netip.Addr{mapped, compat} {
				if _, r := PolicyPublic.Refuses(v); r != pub {
					t.Fatalf("%s judged %v but %s judged %v", a, pub, v, r)
				}
			}
		}
		// The allow list admits exactly what it lists.
		g := guard{allow: []netip.Prefix{netip.PrefixFrom(unwrap(a), unwrap(a).BitLen())}}
		if _, ok := g.check(a); !ok {
			t.Fatalf("%s refused although allow-listed", a)
		}
	})
}

// FuzzSplitHostPort holds the validator's one-pass split to url.URL's
// Hostname and Port, which it replaces.
func FuzzSplitHostPort(f *testing.F) {
	for _, s := range []string{"h", "h:", "h:80", "[::1]", "[::1]:80", "[::1]:", "::1", "a:b", "[a]:x", ":80", "", "[]:1", "h:8a0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, hostPort string) {
		u := &url.URL{Host: hostPort}
		if h, p := splitHostPort(hostPort); h != u.Hostname() || p != u.Port() {
			t.Fatalf("splitHostPort(%q) = %q, %q; url says %q, %q", hostPort, h, p, u.Hostname(), u.Port())
		}
	})
}
