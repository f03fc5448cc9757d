package sig_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"net/http"
	"testing"

	"github.com/fedkit/fedkit/sig"
)

// TestAlgorithmsRFC9421 signs and verifies with each RFC 9421 algorithm and
// checks that a key cannot be used under another key type's algorithm.
func TestAlgorithmsRFC9421(t *testing.T) {
	t.Parallel()
	rsaKey := testRSAKey(t)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	secret := []byte("a shared secret of some length")
	cases := []struct {
		alg  string
		key  crypto.PrivateKey
		pub  crypto.PublicKey
		also string // another algorithm the verifier must refuse for this key
	}{
		{sig.AlgRSAv15SHA256, rsaKey, rsaKey.Public(), sig.AlgEd25519},
		{sig.AlgRSAPSSSHA512, rsaKey, rsaKey.Public(), sig.AlgECDSAP256SHA256},
		{sig.AlgECDSAP256SHA256, ec, ec.Public(), sig.AlgRSAv15SHA256},
		{sig.AlgEd25519, ed, ed.Public(), sig.AlgHMACSHA256},
		{sig.AlgHMACSHA256, secret, secret, sig.AlgEd25519},
	}
	for _, tc := range cases {
		t.Run(tc.alg, func(t *testing.T) {
			req, _ := http.NewRequest("GET", "https://b.example/x", nil)
			err := sig.SignRFC9421(req, tc.key, &sig.SignOpts{Components: []string{"@method", "@target-uri"}, KeyID: "k", Alg: tc.alg, Created: t0})
			if err != nil {
				t.Fatal(err)
			}
			s := only(t, req.Header)
			if s.Alg != tc.alg {
				t.Fatalf("alg parameter %q", s.Alg)
			}
			if err := sig.VerifyRFC9421(req, s, tc.pub, ""); err != nil {
				t.Fatalf("verify: %v", err)
			}
			if err := sig.VerifyRFC9421(req, s, tc.pub, tc.also); !errors.Is(err, sig.ErrUnsupportedAlgorithm) {
				t.Fatalf("pinned %s: %v", tc.also, err)
			}
			s.Alg = tc.also // as if the alg parameter lied
			if err := sig.VerifyRFC9421(req, s, tc.pub, ""); !errors.Is(err, sig.ErrUnsupportedAlgorithm) {
				t.Fatalf("alg %s with this key: %v", tc.also, err)
			}
		})
	}
	req, _ := http.NewRequest("GET", "https://b.example/x", nil)
	if err := sig.SignRFC9421(req, ed, &sig.SignOpts{Components: []string{"@method"}, Alg: "rsa-v1_5-sha1"}); !errors.Is(err, sig.ErrUnsupportedAlgorithm) {
		t.Fatalf("unknown alg: %v", err)
	}
}
