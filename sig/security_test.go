package sig_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/sig"
)

// verifyWith verifies in at t0 with a resolver returning k.
func verifyWith(t *testing.T, k *sig.Key, cfg sig.VerifierConfig, in *http.Request) (*sig.Result, error) {
	t.Helper()
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return t0 }
	}
	v, err := sig.NewVerifier(sig.KeyResolverFunc(func(context.Context, sig.KeyID) (*sig.Key, error) { return k, nil }), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v.Verify(in)
}

// TestVerifyRequiredComponents refuses, per scheme, a signature that leaves
// out what Mastodon requires, and accepts the equivalent alternatives.
func TestVerifyRequiredComponents(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	cav := func(headers ...string) func(*http.Request) error {
		return func(r *http.Request) error { return sig.SignCavage(r, key, keyID, headers) }
	}
	rfc := func(created bool, comps ...string) func(*http.Request) error {
		return func(r *http.Request) error {
			o := &sig.SignOpts{Components: comps, KeyID: keyID}
			if created {
				o.Created = t0
			}
			return sig.SignRFC9421(r, key, o)
		}
	}
	for _, tc := range []struct {
		name   string
		sign   func(*http.Request) error
		nonces bool
		want   error
	}{
		{"cavage/all", cav("(request-target)", "host", "date"), false, nil},
		{"cavage/(created) for date", func(r *http.Request) error {
			cs := &sig.CavageSignature{KeyID: keyID, Algorithm: "hs2019", Headers: []string{"(request-target)", "host", "(created)"}, Created: t0}
			return signCavageRaw(r, cs, func(m []byte) ([]byte, error) { return rsaSign(key, m) })
		}, false, nil},
		{"cavage/no (request-target)", cav("host", "date"), false, sig.ErrMissingComponent},
		{"cavage/no date or (created)", cav("(request-target)", "host"), false, sig.ErrMissingComponent},
		{"9421/all", rfc(true, "@method", "@target-uri", "@authority"), false, nil},
		{"9421/date for created", rfc(false, "@method", "@target-uri", "date"), false, nil},
		{"9421/@request-target and @authority", rfc(true, "@method", "@request-target", "@authority"), false, nil},
		{"9421/no @method", rfc(true, "@target-uri", "@authority", "date"), false, sig.ErrMissingComponent},
		{"9421/no target", rfc(true, "@method", "@authority", "date"), false, sig.ErrMissingComponent},
		{"9421/@path without authority", rfc(true, "@method", "@path", "date"), false, sig.ErrMissingComponent},
		{"9421/no created or date", rfc(false, "@method", "@target-uri", "@authority"), false, sig.ErrMissingComponent},
		{"9421/no nonce with a nonce store", rfc(true, "@method", "@target-uri", "@authority"), true, sig.ErrMissingComponent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := newReq(t, http.MethodGet, "https://b.example/notes/1", "")
			out.Header.Set("Date", t0.Format(http.TimeFormat))
			if err := tc.sign(out); err != nil {
				t.Fatal(err)
			}
			cfg := sig.VerifierConfig{}
			if tc.nonces {
				cfg.Nonces = &memNonces{seen: map[string]time.Time{}}
			}
			_, err := verifyWith(t, &sig.Key{Public: key.Public(), Owner: actor}, cfg, inbound(t, out))
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestVerifyClockEdges checks the window on a signed Date beside created,
// and expires before created.
func TestVerifyClockEdges(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	stale := t0.Add(-13 * time.Hour).Format(http.TimeFormat)
	for _, tc := range []struct {
		name string
		sign func(*http.Request) error
		want error
	}{
		{"cavage/stale signed Date beside (created)", func(r *http.Request) error {
			r.Header.Set("Date", stale)
			cs := &sig.CavageSignature{KeyID: keyID, Algorithm: "hs2019", Headers: []string{"(request-target)", "host", "date", "(created)"}, Created: t0}
			return signCavageRaw(r, cs, func(m []byte) ([]byte, error) { return rsaSign(key, m) })
		}, sig.ErrExpired},
		{"9421/stale signed Date beside created", func(r *http.Request) error {
			r.Header.Set("Date", stale)
			return sig.SignRFC9421(r, key, &sig.SignOpts{Components: []string{"@method", "@target-uri", "date"}, KeyID: keyID, Created: t0})
		}, sig.ErrExpired},
		{"9421/expires before created", func(r *http.Request) error {
			return sig.SignRFC9421(r, key, &sig.SignOpts{Components: []string{"@method", "@target-uri"}, KeyID: keyID, Created: t0, Expires: t0.Add(-time.Second)})
		}, sig.ErrExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := newReq(t, http.MethodGet, "https://b.example/notes/1", "")
			if err := tc.sign(out); err != nil {
				t.Fatal(err)
			}
			_, err := verifyWith(t, &sig.Key{Public: key.Public(), Owner: actor}, sig.VerifierConfig{}, inbound(t, out))
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func rsaSign(k *rsa.PrivateKey, m []byte) ([]byte, error) {
	h := sha256.Sum256(m)
	return rsa.SignPKCS1v15(nil, k, crypto.SHA256, h[:])
}

// signCavageRaw signs cs's signing string with sign, whatever
// cs.Algorithm claims, as a forger would.
func signCavageRaw(r *http.Request, cs *sig.CavageSignature, sign func([]byte) ([]byte, error)) error {
	str, err := sig.CavageSigningString(r, cs)
	if err != nil {
		return err
	}
	cs.Signature, err = sign([]byte(str))
	if err != nil {
		return err
	}
	r.Header.Set("Signature", cs.String())
	return nil
}

// TestVerifyAlgorithmConfusion refuses an algorithm that does not fit the
// resolved key, and keys too weak or of an unsupported curve.
func TestVerifyAlgorithmConfusion(t *testing.T) {
	t.Parallel()
	rsaKey := testRSAKey(t)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	weak := &rsa.PublicKey{N: new(big.Int).Lsh(big.NewInt(1), 511), E: 65537}
	weak.N.Add(weak.N, big.NewInt(1))
	pubPEM, _ := sig.MarshalPublicKeyPEM(rsaKey.Public())
	hdrs := []string{"(request-target)", "host", "date"}
	cavage := func(alg string, sign func([]byte) ([]byte, error)) func(*http.Request) error {
		return func(r *http.Request) error {
			return signCavageRaw(r, &sig.CavageSignature{KeyID: keyID, Algorithm: alg, Headers: hdrs}, sign)
		}
	}
	rfc := func(alg string, key any) func(*http.Request) error {
		return func(r *http.Request) error {
			return sig.SignRFC9421(r, key, &sig.SignOpts{Components: []string{"@method", "@target-uri", "date"}, KeyID: keyID, Alg: alg})
		}
	}
	edSign := func(m []byte) ([]byte, error) { return ed25519.Sign(edKey, m), nil }
	rsaSig := func(m []byte) ([]byte, error) { return rsaSign(rsaKey, m) }
	for _, tc := range []struct {
		name string
		sign func(*http.Request) error
		pub  crypto.PublicKey
		want error
	}{
		{"cavage/hs2019 with Ed25519", cavage("hs2019", edSign), edKey.Public(), nil},
		{"cavage/hs2019 with RSA", cavage("hs2019", rsaSig), rsaKey.Public(), nil},
		{"cavage/rsa-sha256 label on an Ed25519 key", cavage("rsa-sha256", edSign), edKey.Public(), sig.ErrUnsupportedAlgorithm},
		{"cavage/ed25519 label on an RSA key", cavage("ed25519", rsaSig), rsaKey.Public(), sig.ErrUnsupportedAlgorithm},
		{"cavage/weak RSA key", cavage("rsa-sha256", rsaSig), weak, sig.ErrWeakKey},
		{"cavage/P-384 key", cavage("hs2019", rsaSig), &p384.PublicKey, sig.ErrUnsupportedKey},
		// The classic confusion: HMAC keyed with the public key's bytes.
		{"9421/hmac keyed with the RSA public key", rfc(sig.AlgHMACSHA256, pubPEM), rsaKey.Public(), sig.ErrUnsupportedAlgorithm},
		{"9421/ed25519 alg on an RSA key", rfc(sig.AlgEd25519, edKey), rsaKey.Public(), sig.ErrUnsupportedAlgorithm},
		{"9421/weak RSA key", rfc(sig.AlgRSAv15SHA256, rsaKey), weak, sig.ErrWeakKey},
		{"9421/P-384 key", rfc(sig.AlgRSAv15SHA256, rsaKey), &p384.PublicKey, sig.ErrUnsupportedKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := newReq(t, http.MethodGet, "https://b.example/notes/1", "")
			out.Header.Set("Date", t0.Format(http.TimeFormat))
			if err := tc.sign(out); err != nil && tc.want == nil {
				t.Fatal(err)
			}
			_, err := verifyWith(t, &sig.Key{Public: tc.pub, Owner: actor}, sig.VerifierConfig{}, inbound(t, out))
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestVerifyReportsResolverOwner reports the owner the resolver gave, not
// one derived from the key ID, and refuses a resolver's empty key.
func TestVerifyReportsResolverOwner(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	const owner = "https://a.example/users/alice"
	for _, scheme := range []sig.Scheme{sig.SchemeCavage, sig.SchemeRFC9421} {
		t.Run(scheme.String(), func(t *testing.T) {
			b := setup(t, key, nil)
			out := newReq(t, http.MethodPost, "https://b.example/inbox", `{}`)
			if err := b.signer.Sign(out, scheme); err != nil {
				t.Fatal(err)
			}
			res, err := verifyWith(t, &sig.Key{Public: key.Public(), Owner: owner}, sig.VerifierConfig{}, inbound(t, out))
			if err != nil || res.Owner != owner {
				t.Fatalf("Verify = %+v, %v; want owner %q", res, err, owner)
			}
			if _, err := verifyWith(t, &sig.Key{Owner: owner}, sig.VerifierConfig{}, inbound(t, out)); !errors.Is(err, sig.ErrUnknownKey) {
				t.Fatalf("nil Public: %v, want ErrUnknownKey", err)
			}
		})
	}
}

type recNonces struct {
	until time.Time
	err   error
}

func (r *recNonces) Reserve(_ context.Context, _ sig.KeyID, _ string, until time.Time) (bool, error) {
	r.until = until
	return r.err == nil, r.err
}

// TestVerifyNonceStore keeps a nonce for as long as its signature could
// verify, and fails closed when the store fails.
func TestVerifyNonceStore(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	b := setup(t, key, nil) // the signer writes expires = created + 5 min
	out := newReq(t, http.MethodGet, "https://b.example/notes/1", "")
	if err := b.signer.Sign(out, sig.SchemeRFC9421); err != nil {
		t.Fatal(err)
	}
	k := &sig.Key{Public: key.Public(), Owner: actor}
	rec := &recNonces{}
	if _, err := verifyWith(t, k, sig.VerifierConfig{Nonces: rec}, inbound(t, out)); err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(5*time.Minute + sig.SkewDefault); !rec.until.Equal(want) {
		t.Fatalf("until = %v, want %v", rec.until, want)
	}
	boom := errors.New("store down")
	if _, err := verifyWith(t, k, sig.VerifierConfig{Nonces: &recNonces{err: boom}}, inbound(t, out)); !errors.Is(err, boom) {
		t.Fatalf("store error: Verify = %v", err)
	}
	// Without expires the nonce is kept to the end of the clock window.
	out2 := newReq(t, http.MethodGet, "https://b.example/notes/1", "")
	if err := sig.SignRFC9421(out2, key, &sig.SignOpts{Components: []string{"@method", "@target-uri"}, KeyID: keyID, Created: t0, Nonce: "n1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := verifyWith(t, k, sig.VerifierConfig{Nonces: rec}, inbound(t, out2)); err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(sig.MaxAgeDefault + sig.SkewDefault); !rec.until.Equal(want) {
		t.Fatalf("until = %v, want %v", rec.until, want)
	}
}

// TestCavageQueryNotSubstitutable: the legacy query-less fallback never
// lets a signature over one query verify another.
func TestCavageQueryNotSubstitutable(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	b := setup(t, key, nil)
	out := newReq(t, http.MethodGet, "https://b.example/outbox?page=1", "")
	if err := b.signer.Sign(out, sig.SchemeCavage); err != nil {
		t.Fatal(err)
	}
	in := inbound(t, out)
	in.URL.RawQuery = "page=2"
	in.RequestURI = "/outbox?page=2"
	if _, err := b.verifier.Verify(in); !errors.Is(err, sig.ErrBadSignature) {
		t.Fatalf("other query: %v, want ErrBadSignature", err)
	}
}

// countingReader is an endless body that counts what was read.
type countingReader struct{ n int64 }

func (c *countingReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	c.n += int64(len(p))
	return len(p), nil
}

// TestVerifyHostileBounds refuses oversized input with bounded work.
func TestVerifyHostileBounds(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	k := &sig.Key{Public: key.Public(), Owner: actor}
	t.Run("endless body", func(t *testing.T) {
		b := setup(t, key, nil)
		out := newReq(t, http.MethodPost, "https://b.example/inbox", `{}`)
		if err := b.signer.Sign(out, sig.SchemeCavage); err != nil {
			t.Fatal(err)
		}
		in := inbound(t, out)
		cr := &countingReader{}
		in.Body, in.ContentLength = io.NopCloser(cr), -1
		const limit = 1 << 16
		_, err := verifyWith(t, k, sig.VerifierConfig{MaxBodyBytes: limit}, in)
		if !errors.Is(err, sig.ErrDigestMismatch) || !strings.Contains(err.Error(), "over 65536 bytes") {
			t.Fatalf("Verify = %v, want ErrDigestMismatch", err)
		}
		if cr.n > 2*limit {
			t.Fatalf("read %d bytes for a %d limit", cr.n, limit)
		}
	})
	for _, tc := range []struct {
		name   string
		scheme sig.Scheme
		pad    func(h http.Header)
	}{
		// A valid signature made oversized by padding that would
		// otherwise be ignored: the size bound alone refuses it.
		{"cavage Signature over 16 KiB", sig.SchemeCavage, func(h http.Header) {
			h.Set("Signature", h.Get("Signature")+`,x-pad="`+strings.Repeat("a", 16<<10)+`"`)
		}},
		{"Signature-Input over 16 KiB of labels", sig.SchemeRFC9421, func(h http.Header) {
			var in, sg strings.Builder
			in.WriteString(h.Get("Signature-Input"))
			sg.WriteString(h.Get("Signature"))
			for i := 0; in.Len() <= 16<<10; i++ {
				fmt.Fprintf(&in, `, p%d=("@method");created=1`, i)
				fmt.Fprintf(&sg, `, p%d=:AAAA:`, i)
			}
			h.Set("Signature-Input", in.String())
			h.Set("Signature", sg.String())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, key, nil)
			out := newReq(t, http.MethodGet, "https://b.example/x", "")
			if err := b.signer.Sign(out, tc.scheme); err != nil {
				t.Fatal(err)
			}
			if _, err := verifyWith(t, k, sig.VerifierConfig{}, inbound(t, out)); err != nil {
				t.Fatalf("unpadded: %v", err)
			}
			tc.pad(out.Header)
			if _, err := verifyWith(t, k, sig.VerifierConfig{}, inbound(t, out)); !errors.Is(err, sig.ErrMalformed) {
				t.Fatalf("Verify = %v, want ErrMalformed", err)
			}
		})
	}
	t.Run("too many components", func(t *testing.T) {
		in := newReq(t, http.MethodGet, "https://b.example/x", "")
		in.Header.Set("Signature-Input", `sig1=(`+strings.Repeat(`"@method" `, 65)+`"@target-uri");created=1`)
		in.Header.Set("Signature", "sig1=:AAAA:")
		if _, err := verifyWith(t, k, sig.VerifierConfig{}, in); !errors.Is(err, sig.ErrMalformed) {
			t.Fatalf("Verify = %v, want ErrMalformed", err)
		}
	})
}

// TestVerifyDigestEveryValue refuses a Digest whose second SHA-256 value
// is wrong, and a body on any method without a signed digest.
func TestVerifyDigestEveryValue(t *testing.T) {
	t.Parallel()
	body := []byte(`{}`)
	good := sig.Digest(body)
	bad := sig.Digest([]byte(`{"x":1}`))
	if err := sig.VerifyDigest([]string{good + "," + bad}, body); !errors.Is(err, sig.ErrDigestMismatch) {
		t.Fatalf("good then bad: %v", err)
	}
	if err := sig.VerifyDigest([]string{good, bad}, body); !errors.Is(err, sig.ErrDigestMismatch) {
		t.Fatalf("two lines: %v", err)
	}

	key := testRSAKey(t)
	out := newReq(t, http.MethodDelete, "https://b.example/notes/1", `{"type":"Delete"}`)
	out.Header.Set("Date", t0.Format(http.TimeFormat))
	if err := sig.SignCavage(out, key, keyID, []string{"(request-target)", "host", "date"}); err != nil {
		t.Fatal(err)
	}
	_, err := verifyWith(t, &sig.Key{Public: key.Public(), Owner: actor}, sig.VerifierConfig{}, inbound(t, out))
	if !errors.Is(err, sig.ErrMissingComponent) {
		t.Fatalf("DELETE with an unsigned body: %v, want ErrMissingComponent", err)
	}
}

// TestCavageRefusesRepeatedSignature refuses a second Signature field
// line: which one counts would otherwise depend on the reader (Go's
// Header.Get takes the first, a joining proxy sees both).
func TestCavageRefusesRepeatedSignature(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	b := setup(t, key, nil)
	out := newReq(t, http.MethodGet, "https://b.example/x", "")
	if err := b.signer.Sign(out, sig.SchemeCavage); err != nil {
		t.Fatal(err)
	}
	for _, extra := range []string{`keyId="https://c.example/k",headers="(request-target) host date",signature="AAAA"`, ""} {
		in := inbound(t, out)
		in.Header.Add("Signature", extra)
		if _, err := b.verifier.Verify(in); !errors.Is(err, sig.ErrMalformed) {
			t.Fatalf("extra %q: Verify = %v, want ErrMalformed", extra, err)
		}
	}
}

// TestQueryParamWorkIsLinear: a signature covering many @query-param
// components over a long query costs one pass over the query, not one per
// component (62 components over a 1 MiB query took ~0.4 s of CPU before
// the key was even used). Allocations stand in for work: each pass
// unescapes every part.
func TestQueryParamWorkIsLinear(t *testing.T) {
	key := testRSAKey(t)
	const parts, comps = 2000, 60
	var q strings.Builder
	o := &sig.SignOpts{Components: []string{"@method", "@target-uri", "date"}, KeyID: keyID, Created: t0}
	for i := range comps {
		fmt.Fprintf(&q, "n%d=1&", i)
		o.Components = append(o.Components, fmt.Sprintf(`@query-param;name="n%d"`, i))
	}
	for i := range parts {
		fmt.Fprintf(&q, "x%%20%d=v%%20&", i)
	}
	out := newReq(t, http.MethodGet, "https://b.example/x?"+q.String(), "")
	out.Header.Set("Date", t0.Format(http.TimeFormat))
	if err := sig.SignRFC9421(out, key, o); err != nil {
		t.Fatal(err)
	}
	allocs := verifyAllocs(t, key, out)
	if allocs > 20*parts {
		t.Fatalf("%v allocations for %d query parts and %d @query-param components: work grows with their product", allocs, parts, comps)
	}
}

// TestDictionaryKeyWorkIsLinear: components naming many ;key= members of
// one dictionary field parse it once, not once per component (60 over a
// 1 MiB dictionary took ~4 s of CPU before the signature was checked).
func TestDictionaryKeyWorkIsLinear(t *testing.T) {
	key := testRSAKey(t)
	const members, comps = 2000, 60
	var d strings.Builder
	o := &sig.SignOpts{Components: []string{"@method", "@target-uri", "date"}, KeyID: keyID, Created: t0}
	for i := range comps {
		fmt.Fprintf(&d, "k%d=1, ", i)
		o.Components = append(o.Components, fmt.Sprintf(`x-dict;key="k%d"`, i))
	}
	for i := range members {
		fmt.Fprintf(&d, "z%d=%d, ", i, i)
	}
	out := newReq(t, http.MethodGet, "https://b.example/x", "")
	out.Header.Set("Date", t0.Format(http.TimeFormat))
	out.Header.Set("X-Dict", strings.TrimSuffix(d.String(), ", "))
	if err := sig.SignRFC9421(out, key, o); err != nil {
		t.Fatal(err)
	}
	allocs := verifyAllocs(t, key, out)
	if allocs > 20*members {
		t.Fatalf("%v allocations for %d members and %d ;key components: work grows with their product", allocs, members, comps)
	}
}

// stallBody declares a large body and sends a few bytes.
type stallBody struct{ sent bool }

func (s *stallBody) Read(p []byte) (int, error) {
	if s.sent {
		return 0, io.ErrUnexpectedEOF
	}
	s.sent = true
	return copy(p, "{}"), nil
}

// TestVerifyBodyNotPreallocatedFromContentLength: a declared
// Content-Length is not allocated before the bytes arrive, so a sender that
// declares 8 MiB and stalls costs what it sent, not 8 MiB per connection.
func TestVerifyBodyNotPreallocatedFromContentLength(t *testing.T) {
	key := testRSAKey(t)
	b := setup(t, key, nil)
	out := newReq(t, http.MethodPost, "https://b.example/inbox", `{}`)
	if err := b.signer.Sign(out, sig.SchemeCavage); err != nil {
		t.Fatal(err)
	}
	in := inbound(t, out)
	in.Body, in.ContentLength = io.NopCloser(&stallBody{}), 8<<20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := b.verifier.Verify(in)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, sig.ErrDigestMismatch) {
		t.Fatalf("Verify = %v, want ErrDigestMismatch", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("allocated %d bytes for a 2-byte body declared as 8 MiB", n)
	}
}

// TestVerifyBodyShorterThanDeclared refuses a body shorter than its
// Content-Length above the preallocation size, as below it.
func TestVerifyBodyShorterThanDeclared(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	b := setup(t, key, nil)
	for _, declared := range []int64{10, 4 << 20} {
		out := newReq(t, http.MethodPost, "https://b.example/inbox", `{}`)
		if err := b.signer.Sign(out, sig.SchemeCavage); err != nil {
			t.Fatal(err)
		}
		in := inbound(t, out)
		in.ContentLength = declared
		if _, err := b.verifier.Verify(in); !errors.Is(err, sig.ErrDigestMismatch) || !strings.Contains(err.Error(), "body") {
			t.Fatalf("declared %d: Verify = %v", declared, err)
		}
	}
}

// TestCavageUnsignedCreatedIgnored: a created parameter that "(created)"
// does not cover is not signed, so anyone relaying the request can change
// it; the window and Result.Created come from the signed Date instead.
func TestCavageUnsignedCreatedIgnored(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	b := setup(t, key, nil)
	out := newReq(t, http.MethodGet, "https://b.example/x", "")
	if err := b.signer.Sign(out, sig.SchemeCavage); err != nil {
		t.Fatal(err)
	}
	for _, created := range []time.Time{t0.Add(30 * time.Minute), t0.Add(5 * time.Hour)} {
		in := inbound(t, out)
		in.Header.Set("Signature", in.Header.Get("Signature")+fmt.Sprintf(",created=%d", created.Unix()))
		res, err := b.verifier.Verify(in)
		if err != nil || !res.Created.Equal(t0) {
			t.Fatalf("unsigned created %v: Verify = %+v, %v; want Created %v", created, res, err, t0)
		}
	}
}

// verifyAllocs checks that out, signed with key, verifies, and returns the
// allocations one verification takes: the work tests' stand-in for time.
func verifyAllocs(t *testing.T, key crypto.Signer, out *http.Request) float64 {
	t.Helper()
	in := inbound(t, out)
	v, err := sig.NewVerifier(staticKeys(key.Public()), &sig.VerifierConfig{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(in); err != nil {
		t.Fatal(err)
	}
	return testing.AllocsPerRun(2, func() { _, _ = v.Verify(in) })
}

// TestVerifyPathCoversQuery: when @path stands in for @target-uri, a
// request with a query verifies only if @query, or @query-param for every
// parameter, signs it; otherwise a GET signed for ?page=1 would verify as
// ?page=999&admin=true.
func TestVerifyPathCoversQuery(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	for _, tc := range []struct {
		name  string
		comps []string
		url   string // the URL signed
		query string // the query the server sees; "-" for the signed one
		want  error
	}{
		{"@path without a query", []string{"@method", "@authority", "@path"}, "https://b.example/outbox", "-", nil},
		{"@path with an unsigned query", []string{"@method", "@authority", "@path"}, "https://b.example/outbox?page=1", "-", sig.ErrMissingComponent},
		{"@path, query changed", []string{"@method", "@authority", "@path"}, "https://b.example/outbox?page=1", "page=999&admin=true", sig.ErrMissingComponent},
		{"@path, query added", []string{"@method", "@authority", "@path"}, "https://b.example/outbox", "admin=true", sig.ErrMissingComponent},
		{"@path and @query", []string{"@method", "@authority", "@path", "@query"}, "https://b.example/outbox?page=1", "-", nil},
		{"@path and @query, query changed", []string{"@method", "@authority", "@path", "@query"}, "https://b.example/outbox?page=1", "page=999&admin=true", sig.ErrBadSignature},
		{"@path and every @query-param", []string{"@method", "@authority", "@path", `@query-param;name="page"`, `@query-param;name="min_id"`}, "https://b.example/outbox?page=1&min_id=5", "-", nil},
		{"@path and some @query-param", []string{"@method", "@authority", "@path", `@query-param;name="page"`}, "https://b.example/outbox?page=1&min_id=5", "-", sig.ErrMissingComponent},
		{"@path and @query-param, parameter added", []string{"@method", "@authority", "@path", `@query-param;name="page"`}, "https://b.example/outbox?page=1", "page=1&admin=true", sig.ErrMissingComponent},
		{"@path and @query-param of an encoded name", []string{"@method", "@authority", "@path", `@query-param;name="a%20b"`}, "https://b.example/outbox?a+b=1", "-", nil},
		{"@request-target carries the query", []string{"@method", "@authority", "@request-target"}, "https://b.example/outbox?page=1", "-", nil},
		{"@target-uri carries the query", []string{"@method", "@target-uri"}, "https://b.example/outbox?page=1", "-", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := newReq(t, http.MethodGet, tc.url, "")
			if err := sig.SignRFC9421(out, key, &sig.SignOpts{Components: tc.comps, KeyID: keyID, Created: t0}); err != nil {
				t.Fatal(err)
			}
			in := inbound(t, out)
			if tc.query != "-" {
				in.URL.RawQuery = tc.query
				in.RequestURI = in.URL.RequestURI()
			}
			_, err := verifyWith(t, &sig.Key{Public: key.Public(), Owner: actor}, sig.VerifierConfig{}, in)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestVerifySchemeMismatch: a request signed for https:// checked by a
// Verifier configured for http (a server behind a TLS proxy, misconfigured)
// fails with a *SchemeMismatchError that names both schemes, still an
// ErrBadSignature; a signature that is bad either way stays plain.
func TestVerifySchemeMismatch(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	for _, tc := range []struct {
		name       string
		url        string
		comps      []string
		configured string
		tamper     bool
		want       *sig.SchemeMismatchError // nil: no mismatch reported
		wantErr    error
	}{
		{"https signed, http configured", "https://b.example/notes/1", []string{"@method", "@target-uri"}, "http", false,
			&sig.SchemeMismatchError{Signed: "https", Configured: "http"}, sig.ErrBadSignature},
		{"http signed, https configured", "http://b.example/notes/1", []string{"@method", "@target-uri"}, "https", false,
			&sig.SchemeMismatchError{Signed: "http", Configured: "https"}, sig.ErrBadSignature},
		{"@scheme signed", "https://b.example/notes/1", []string{"@method", "@scheme", "@authority", "@path"}, "http", false,
			&sig.SchemeMismatchError{Signed: "https", Configured: "http"}, sig.ErrBadSignature},
		{"bad either way", "https://b.example/notes/1", []string{"@method", "@target-uri"}, "http", true, nil, sig.ErrBadSignature},
		{"scheme not signed", "https://b.example/notes/1", []string{"@method", "@authority", "@path"}, "http", false, nil, nil},
		{"same scheme", "https://b.example/notes/1", []string{"@method", "@target-uri"}, "https", false, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := newReq(t, http.MethodGet, tc.url, "")
			if err := sig.SignRFC9421(out, key, &sig.SignOpts{Components: tc.comps, KeyID: keyID, Created: t0}); err != nil {
				t.Fatal(err)
			}
			in := inbound(t, out)
			if tc.tamper {
				in.URL.Path = "/notes/2"
				in.RequestURI = in.URL.RequestURI()
			}
			_, err := verifyWith(t, &sig.Key{Public: key.Public(), Owner: actor}, sig.VerifierConfig{URLScheme: tc.configured}, in)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("Verify = %v, want %v", err, tc.wantErr)
			}
			var sm *sig.SchemeMismatchError
			switch {
			case tc.want == nil && errors.As(err, &sm):
				t.Fatalf("Verify = %v, want no scheme mismatch", err)
			case tc.want != nil && (!errors.As(err, &sm) || *sm != *tc.want):
				t.Fatalf("Verify = %v, want %+v", err, tc.want)
			case tc.want != nil && !strings.Contains(err.Error(), "URLScheme"):
				t.Errorf("error %q does not say what to change", err)
			}
		})
	}
}

// TestNonceStoreTakesVerifierClock: the clock rule. A MemoryNonceStore
// with no clock of its own, handed to a Verifier, compares the until times
// the Verifier computes on the Verifier's clock, so a replay is refused
// whatever the calendar says (on the wall clock the signature's window
// would be long past and the replay look new).
func TestNonceStoreTakesVerifierClock(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	k := &sig.Key{Public: key.Public(), Owner: actor}
	store := sig.NewMemoryNonceStore(nil)
	out := newReq(t, http.MethodGet, "https://b.example/notes/1", "")
	if err := sig.SignRFC9421(out, key, &sig.SignOpts{Components: []string{"@method", "@target-uri"}, KeyID: keyID, Created: t0, Nonce: "once"}); err != nil {
		t.Fatal(err)
	}
	if _, err := verifyWith(t, k, sig.VerifierConfig{Nonces: store}, inbound(t, out)); err != nil {
		t.Fatal(err)
	}
	if _, err := verifyWith(t, k, sig.VerifierConfig{Nonces: store}, inbound(t, out)); !errors.Is(err, sig.ErrReplay) {
		t.Fatalf("replayed nonce: Verify = %v, want ErrReplay", err)
	}
}
