package sig_test

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/sig"
)

// misskeyRequest builds an inbound request the way Misskey's backend signs
// one with @misskey-dev/node-http-message-signatures 0.0.10 (spec section
// 11): draft-cavage only; POST covers "(request-target) date host digest"
// with a SHA-256 Digest, GET "(request-target) date host accept"; the
// request target is the path without the query; algorithm is "rsa-sha256"
// for RSA keys and "ed25519-sha512" for Ed25519 keys; the header is
// keyId, algorithm, headers, signature with no spaces after the commas.
// The signing string is built here by hand, not by sig, so a bug shared by
// our signer and verifier cannot hide.
func misskeyRequest(t *testing.T, method, target, body, alg string, key crypto.Signer, date time.Time) *http.Request {
	t.Helper()
	in := httptest.NewRequest(method, target, http.NoBody)
	if method == http.MethodPost {
		in = httptest.NewRequest(method, target, strings.NewReader(body))
	}
	in.Host = "b.example"
	in.Header.Set("Date", date.UTC().Format(http.TimeFormat)) // JS Date.toUTCString()
	path, _, _ := strings.Cut(target, "?")
	lines := []string{"(request-target): " + strings.ToLower(method) + " " + path, "date: " + in.Header.Get("Date"), "host: b.example"}
	headers := "(request-target) date host"
	if method == http.MethodPost {
		sum := sha256.Sum256([]byte(body))
		in.Header.Set("Digest", "SHA-256="+base64.StdEncoding.EncodeToString(sum[:]))
		in.Header.Set("Content-Type", "application/activity+json")
		lines = append(lines, "digest: "+in.Header.Get("Digest"))
		headers += " digest"
	} else {
		in.Header.Set("Accept", "application/activity+json, application/ld+json")
		lines = append(lines, "accept: "+in.Header.Get("Accept"))
		headers += " accept"
	}
	msg := []byte(strings.Join(lines, "\n"))
	var raw []byte
	switch k := key.(type) {
	case ed25519.PrivateKey:
		raw = ed25519.Sign(k, msg) // WebCrypto Ed25519: the hash in the name is not applied
	case *rsa.PrivateKey:
		h := sha256.Sum256(msg)
		var err error
		if raw, err = rsa.SignPKCS1v15(nil, k, crypto.SHA256, h[:]); err != nil {
			t.Fatal(err)
		}
	}
	in.Header.Set("Signature", `keyId="`+keyID+`",algorithm="`+alg+`",headers="`+headers+`",signature="`+base64.StdEncoding.EncodeToString(raw)+`"`)
	return in
}

// TestVerifyMisskey verifies requests shaped as Misskey signs them. Before
// ed25519-sha512 was accepted, the two Ed25519 cases failed with
// ErrUnsupportedAlgorithm, so every Ed25519-signed Misskey delivery was
// refused.
func TestVerifyMisskey(t *testing.T) {
	t.Parallel()
	edKey := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	rsaKey := testRSAKey(t)
	const body = `{"@context":"https://www.w3.org/ns/activitystreams","type":"Follow","actor":"https://a.example/actor","object":"https://b.example/users/x"}`
	cases := []struct {
		name        string
		method      string
		target, alg string
		key         crypto.Signer
		verifyWith  crypto.PublicKey
		tamperBody  bool
		dateAhead   time.Duration
		want        error
	}{
		{name: "ed25519-post", method: http.MethodPost, target: "/inbox", alg: "ed25519-sha512", key: edKey},
		{name: "ed25519-get-query-unsigned", method: http.MethodGet, target: "/users/x/outbox?page=true", alg: "ed25519-sha512", key: edKey},
		{name: "ed25519-upper-case-name", method: http.MethodPost, target: "/inbox", alg: "Ed25519-SHA512", key: edKey},
		{name: "rsa-post", method: http.MethodPost, target: "/inbox", alg: "rsa-sha256", key: rsaKey},
		// Misskey signs at send time and allows a Date 2 s early; our
		// verifier is Mastodon's (an hour), so a second ahead passes.
		{name: "ed25519-date-ahead", method: http.MethodPost, target: "/inbox", alg: "ed25519-sha512", key: edKey, dateAhead: time.Second},
		{name: "ed25519-name-on-rsa-key", method: http.MethodPost, target: "/inbox", alg: "ed25519-sha512", key: rsaKey, want: sig.ErrUnsupportedAlgorithm},
		{name: "ed25519-wrong-key", method: http.MethodPost, target: "/inbox", alg: "ed25519-sha512", key: edKey,
			verifyWith: ed25519.NewKeyFromSeed([]byte(strings.Repeat("k", ed25519.SeedSize))).Public(), want: sig.ErrBadSignature},
		{name: "ed25519-tampered-body", method: http.MethodPost, target: "/inbox", alg: "ed25519-sha512", key: edKey, tamperBody: true, want: sig.ErrDigestMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pub := tc.verifyWith
			if pub == nil {
				pub = tc.key.Public()
			}
			v, err := sig.NewVerifier(staticKeys(pub), &sig.VerifierConfig{Now: func() time.Time { return t0 }})
			if err != nil {
				t.Fatal(err)
			}
			in := misskeyRequest(t, tc.method, tc.target, body, tc.alg, tc.key, t0.Add(tc.dateAhead))
			if tc.tamperBody {
				in.Body = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Replace(body, "Follow", "Block", 1))).Body
			}
			res, err := v.Verify(in)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("Verify: %v, want %v", err, tc.want)
			}
			if tc.want == nil && (res.Owner != actor || res.Scheme != sig.SchemeCavage) {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

// TestVerifyCavageEd25519SHA512 checks the algorithm name directly through
// VerifyCavage, without the Verifier's policy.
func TestVerifyCavageEd25519SHA512(t *testing.T) {
	t.Parallel()
	edKey := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	in := misskeyRequest(t, http.MethodPost, "/inbox", "{}", "ed25519-sha512", edKey, t0)
	cs, err := sig.ParseCavageSignature(in.Header.Get("Signature"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sig.VerifyCavage(in, cs, edKey.Public()); err != nil {
		t.Fatalf("VerifyCavage: %v", err)
	}
}
