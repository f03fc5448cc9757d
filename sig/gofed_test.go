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

// TestWeVerifyGoFed has go-fed/httpsig sign (it writes algorithm="hs2019"
// and a SHA-256 Digest) and our Verifier check, including a signature whose
// Digest does not match the body: go-fed accepts that one, we must not.
func TestWeVerifyGoFed(t *testing.T) {
	t.Parallel()
	rsaKey := testRSAKey(t)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	cases := []struct {
		name     string
		key      crypto.PrivateKey
		pub      crypto.PublicKey
		algo     httpsig.Algorithm
		method   string
		body     string
		sentBody string // what actually arrives; differs for the digest case
		want     error
	}{
		{"rsa-get", rsaKey, rsaKey.Public(), httpsig.RSA_SHA256, http.MethodGet, "", "", nil},
		{"rsa-post", rsaKey, rsaKey.Public(), httpsig.RSA_SHA256, http.MethodPost, `{"type":"Follow"}`, `{"type":"Follow"}`, nil},
		{"ed25519-post", edKey, edKey.Public(), httpsig.ED25519, http.MethodPost, `{"type":"Like"}`, `{"type":"Like"}`, nil},
		{"rsa-post-wrong-digest", rsaKey, rsaKey.Public(), httpsig.RSA_SHA256, http.MethodPost, `{"type":"Follow"}`, `{"type":"Delete"}`, sig.ErrDigestMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			headers := []string{httpsig.RequestTarget, "host", "date"}
			if tc.method == http.MethodPost {
				headers = append(headers, "digest")
			}
			signer, _, err := httpsig.NewSigner([]httpsig.Algorithm{tc.algo}, httpsig.DigestSha256, headers, httpsig.Signature, 0)
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(tc.method, "https://b.example/inbox?x=1", strings.NewReader(tc.sentBody))
			req.Host = "b.example"
			req.Header.Set("Host", "b.example") // go-fed reads host from the header map
			req.Header.Set("Date", t0.Format(http.TimeFormat))
			var body []byte
			if tc.method == http.MethodPost {
				body = []byte(tc.body)
			}
			if err := signer.SignRequest(tc.key, keyID, req, body); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(req.Header.Get("Signature"), `algorithm="hs2019"`) {
				t.Fatalf("go-fed did not write hs2019: %s", req.Header.Get("Signature"))
			}
			v, err := sig.NewVerifier(staticKeys(tc.pub), &sig.VerifierConfig{Now: func() time.Time { return t0 }})
			if err != nil {
				t.Fatal(err)
			}
			res, err := v.Verify(req)
			if !errors.Is(err, tc.want) || (err == nil && res.Scheme != sig.SchemeCavage) {
				t.Fatalf("Verify = %+v, %v; want %v", res, err, tc.want)
			}
			if tc.want != nil {
				// go-fed verifies the same request: the hole we refuse to inherit.
				gv, err := httpsig.NewVerifier(req)
				if err != nil {
					t.Fatal(err)
				}
				if err := gv.Verify(tc.pub, tc.algo); err != nil {
					t.Logf("go-fed now refuses it too: %v", err)
				}
			}
		})
	}
}
