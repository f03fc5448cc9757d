package sig_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fedkit/fedkit/sig"
)

// Fuzz targets for what a hostile peer controls beyond the signature
// header parsers of fuzz_test.go: Digest fields, key IDs, object proofs, and
// a whole signed request through Verifier.Verify. Seeds are here and in
// testdata/fuzz/<Name>/.

// digestSeeds are RFC 3230 Digest fields as cavage signers send them.
var digestSeeds = []string{
	"SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=",
	"sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=,SHA-512=WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==",
	"MD5=HUXZLQLMuI/KZ5KDcJPcOA==, UNIXsum=30637",
	"SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=\nSHA-256=AAAA",
	"SHA-256==,=",
}

func FuzzParseDigest(f *testing.F) {
	for _, s := range digestSeeds {
		f.Add(s, []byte(helloBody))
	}
	f.Fuzz(func(t *testing.T, field string, body []byte) {
		lines := strings.Split(field, "\n") // several field lines
		vals, err := sig.ParseDigest(lines)
		verr := sig.VerifyDigest(lines, body)
		if err != nil {
			if !errors.Is(err, sig.ErrMalformed) || !errors.Is(verr, sig.ErrMalformed) {
				t.Fatalf("ParseDigest: %v, VerifyDigest: %v; want ErrMalformed from both", err, verr)
			}
			return
		}
		if len(vals) == 0 {
			t.Fatal("no values and no error")
		}
		known := 0
		for _, v := range vals {
			if v.Alg != strings.ToLower(v.Alg) {
				t.Fatalf("algorithm %q not lower-cased", v.Alg)
			}
			if v.Alg == sig.DigestSHA256 || v.Alg == sig.DigestSHA512 {
				known++
			}
		}
		if verr == nil && known == 0 {
			t.Fatalf("VerifyDigest accepted %q with no algorithm it checks", field)
		}
		if verr != nil && !errors.Is(verr, sig.ErrDigestMismatch) {
			t.Fatalf("VerifyDigest of a parsed field: %v, want ErrDigestMismatch", verr)
		}
		// Our own digest of the body always verifies.
		if err := sig.VerifyDigest([]string{sig.Digest(body)}, body); err != nil {
			t.Fatalf("own Digest: %v", err)
		}
	})
}

var keyIDSeeds = []string{
	"https://mastodon.example/users/alice#main-key",
	"https://gts.example/users/bob/main-key",
	"did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2#z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2",
	"test-key-rsa-pss",
	" https://a.example/k",
	"https://a.example/k\"",
	"https://a.example/\x00",
	"\xff",
}

func FuzzParseKeyID(f *testing.F) {
	for _, s := range keyIDSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := sig.ParseKeyID(s)
		if err != nil {
			if !errors.Is(err, sig.ErrMalformed) {
				t.Fatalf("ParseKeyID(%q): %v, want ErrMalformed", s, err)
			}
			return
		}
		if id.String() != s || id.IsZero() || !strings.HasPrefix(s, id.Document()) {
			t.Fatalf("ParseKeyID(%q) = %q, document %q", s, id, id.Document())
		}
		// A key ID is written into cavage's quoted keyId: nothing that
		// breaks out of the quotes, and no control character.
		if !utf8.ValidString(s) || strings.ContainsAny(s, "\"\\\r\n\x00") || len(s) > sig.MaxKeyIDBytes {
			t.Fatalf("accepted %q", s)
		}
		var back sig.KeyID
		if err := back.UnmarshalText([]byte(s)); err != nil || back != id {
			t.Fatalf("UnmarshalText(%q) = %v, %v", s, back, err)
		}
	})
}

// proofSeeds: the W3C eddsa-jcs-2022 vector, and near misses.
var proofSeeds = []string{
	w3cSignedJCS,
	strings.Replace(w3cSignedJCS, "Alumni Credential", "Alumni CredentiaI", 1),
	`{"@context":"https://www.w3.org/ns/activitystreams","type":"Note","proof":{"type":"DataIntegrityProof","cryptosuite":"eddsa-jcs-2022","verificationMethod":"https://a.example/u#k","proofValue":"z1111"}}`,
	`{"proof":[{"type":"DataIntegrityProof"}]}`,
	`{"proof":{"type":"DataIntegrityProof","cryptosuite":"eddsa-jcs-2022","created":"yesterday","verificationMethod":"x"}}`,
	`{"a":1e400,"proof":{"type":"DataIntegrityProof","cryptosuite":"eddsa-jcs-2022","verificationMethod":"x","proofValue":"z2"}}`,
}

func FuzzVerifyProof(f *testing.F) {
	for _, s := range proofSeeds {
		f.Add([]byte(s))
	}
	pk, err := sig.ParseMultikey(w3cPublicKeyMultibase)
	if err != nil {
		f.Fatal(err)
	}
	pub := pk.(ed25519.PublicKey)
	f.Fuzz(func(t *testing.T, b []byte) {
		var doc map[string]any
		if json.Unmarshal(b, &doc) != nil {
			return
		}
		parsed, perr := sig.ParseProof(doc)
		p, err := sig.VerifyProof(doc, pub)
		if err != nil {
			for _, want := range []error{sig.ErrNoProof, sig.ErrUnsupportedAlgorithm, sig.ErrMalformed, sig.ErrBadSignature} {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("VerifyProof: %v, not a documented error", err)
		}
		if perr != nil || p.VerificationMethod != parsed.VerificationMethod || p.VerificationMethod == "" {
			t.Fatalf("verified proof %+v, but ParseProof = %+v, %v", p, parsed, perr)
		}
		// A verified document changed in any property no longer verifies.
		doc["fuzz-added"] = true
		if _, err := sig.VerifyProof(doc, pub); !errors.Is(err, sig.ErrBadSignature) {
			t.Fatalf("changed document: %v, want ErrBadSignature", err)
		}
	})
}

// signedRequestSeeds returns requests signed at t0 by the test RSA key,
// written out as a client sends them: what Verify sees once a server has
// read them.
func signedRequestSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	key := testRSAKey(tb)
	clock := func() time.Time { return t0 }
	s, err := sig.NewSigner(key, keyID, &sig.SignerConfig{Now: clock})
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	add := func(method, url, body string, sign func(*http.Request) error) {
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, url, r)
		if err != nil {
			tb.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/activity+json")
		}
		if err := sign(req); err != nil {
			tb.Fatal(err)
		}
		var buf bytes.Buffer
		if err := req.Write(&buf); err != nil {
			tb.Fatal(err)
		}
		out = append(out, buf.Bytes())
	}
	note := `{"type":"Create","actor":"` + actor + `"}`
	add("GET", "https://b.example/users/bob/outbox?page=1", "", func(r *http.Request) error { return s.Sign(r, sig.SchemeCavage) })
	add("POST", "https://b.example/inbox", note, func(r *http.Request) error { return s.Sign(r, sig.SchemeCavage) })
	add("GET", "https://b.example/users/bob", "", func(r *http.Request) error { return s.Sign(r, sig.SchemeRFC9421) })
	add("POST", "https://b.example/inbox", note, func(r *http.Request) error { return s.Sign(r, sig.SchemeRFC9421) })
	add("GET", "https://b.example/outbox?page=1", "", func(r *http.Request) error {
		return sig.SignRFC9421(r, key, &sig.SignOpts{Components: []string{"@method", "@authority", "@path", `@query-param;name="page"`}, KeyID: keyID, Created: t0})
	})
	return out
}

func FuzzVerify(f *testing.F) {
	for _, raw := range signedRequestSeeds(f) {
		f.Add(raw)
	}
	key := testRSAKey(f)
	v, err := sig.NewVerifier(sig.KeyResolverFunc(func(_ context.Context, id sig.KeyID) (*sig.Key, error) {
		if id.String() != keyID {
			return nil, sig.ErrUnknownKey
		}
		return &sig.Key{Public: key.Public(), Owner: actor}, nil
	}), &sig.VerifierConfig{Now: func() time.Time { return t0 }, MaxBodyBytes: 4 << 10})
	if err != nil {
		f.Fatal(err)
	}
	documented := []error{sig.ErrNoSignature, sig.ErrExpired, sig.ErrUnknownKey, sig.ErrDigestMismatch, sig.ErrBadSignature,
		sig.ErrUnsupportedAlgorithm, sig.ErrMissingComponent, sig.ErrMalformed, sig.ErrWeakKey, sig.ErrUnsupportedKey}
	f.Fuzz(func(t *testing.T, raw []byte) {
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			return
		}
		body, err := io.ReadAll(io.LimitReader(req.Body, 8<<10))
		if err != nil {
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		res, err := v.Verify(req)
		if err != nil {
			for _, want := range documented {
				if errors.Is(err, want) {
					return
				}
			}
			t.Fatalf("Verify: %v, not a documented error", err)
		}
		if res.KeyID.String() != keyID || res.Owner != actor {
			t.Fatalf("verified as %+v", res)
		}
		// The body read for the digest is put back for the handler.
		again, err := io.ReadAll(req.Body)
		if err != nil || !bytes.Equal(again, body) {
			t.Fatalf("body after Verify %q, want %q (%v)", again, body, err)
		}
	})
}
