package directory

import (
	"net/netip"
	"strings"
	"testing"
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

// TestAddressPolicy: the Directory dial guard of spec section 10.1.
func TestAddressPolicy(t *testing.T) {
	t.Parallel()
	refused := []string{"127.0.0.1", "127.1.2.3", "::1", "0.0.0.0", "::", "169.254.169.254", "fe80::1",
		"224.0.0.1", "239.255.255.250", "ff02::1", "::ffff:127.0.0.1"}
	allowed := []string{"10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1", "2001:db8::1", "203.0.113.7",
		"198.51.100.1", "192.0.2.1", "93.184.216.34", "2606:4700::1111", "fd00::1"}
	for _, s := range refused {
		if AddressAllowed(netip.MustParseAddr(s)) {
			t.Errorf("%s allowed, want refused", s)
		}
	}
	for _, s := range allowed {
		if !AddressAllowed(netip.MustParseAddr(s)) {
			t.Errorf("%s refused, want allowed", s)
		}
	}
}
