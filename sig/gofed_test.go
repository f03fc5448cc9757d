package sig_test

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-fed/httpsig"

	"github.com/fedkit/fedkit/sig"
)

// TestGoFedVerifiesOurs signs with our cavage signer and verifies with
// go-fed/httpsig as an independent peer.
func TestGoFedVerifiesOurs(t *testing.T) {
	t.Parallel()
	rsaKey := testRSAKey(t)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	cases := []struct {
		name   string
		key    crypto.Signer
		pub    crypto.PublicKey
		algo   httpsig.Algorithm
		method string
		body   string
	}{
		{"rsa-get", rsaKey, rsaKey.Public(), httpsig.RSA_SHA256, http.MethodGet, ""},
		{"rsa-post", rsaKey, rsaKey.Public(), httpsig.RSA_SHA256, http.MethodPost, `{"type":"Follow"}`},
		{"ed25519-post", edKey, edKey.Public(), httpsig.ED25519, http.MethodPost, `{"type":"Like"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sig.NewSigner(tc.key, "https://a.example/actor#main-key", nil)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(tc.method, "https://b.example/inbox?x=1", strings.NewReader(tc.body))
			if err := s.Sign(req, sig.SchemeCavage); err != nil {
				t.Fatal(err)
			}
			v, err := httpsig.NewVerifier(req)
			if err != nil {
				t.Fatal(err)
			}
			if v.KeyId() != "https://a.example/actor#main-key" {
				t.Fatalf("KeyId = %q", v.KeyId())
			}
			if err := v.Verify(tc.pub, tc.algo); err != nil {
				t.Fatalf("go-fed refused our signature: %v\n%s", err, req.Header.Get("Signature"))
			}
		})
	}
}

func testRSAKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	k, err := sig.ParsePrivateKeyPEM([]byte(testRSAPEM))
	if err != nil {
		t.Fatal(err)
	}
	return k.(*rsa.PrivateKey)
}

var _ = errors.Is
var _ = time.Now
