package sig_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

func TestMultikey(t *testing.T) {
	t.Parallel()
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cases := []struct {
		name   string
		pub    crypto.PublicKey
		prefix string
	}{
		{"ed25519", ed.Public(), "z6Mk"},
		{"rsa-2048", testRSAKey(t).Public(), "z4MX"},
		{"p-256", ec.Public(), "zDn"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sig.FormatMultikey(tc.pub)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(s, tc.prefix) {
				t.Errorf("%s does not start with %s", s, tc.prefix)
			}
			back, err := sig.ParseMultikey(s)
			if err != nil {
				t.Fatal(err)
			}
			if !back.(interface{ Equal(crypto.PublicKey) bool }).Equal(tc.pub) {
				t.Fatal("round trip changed the key")
			}
		})
	}
	for _, bad := range []struct{ name, in string }{
		{"empty", ""},
		{"base64 multibase", "mAQID"},
		{"not base58", "z0OIl"},
		{"short ed25519", "z6Mk"},
		{"unknown codec (secp256k1)", "zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme"},
		{"too long", "z" + strings.Repeat("2", 5000)},
	} {
		t.Run("invalid/"+bad.name, func(t *testing.T) {
			_, err := sig.ParseMultikey(bad.in)
			if err == nil || !(errors.Is(err, sig.ErrMalformed) || errors.Is(err, sig.ErrUnsupportedKey)) {
				t.Fatalf("ParseMultikey(%.20q) = %v", bad.in, err)
			}
		})
	}
}
