package sig_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/sig"
)

const (
	actor = "https://a.example/actor"
	keyID = actor + "#main-key"
)

var t0 = time.Date(2026, 8, 5, 12, 34, 56, 0, time.UTC)

type bundle struct {
	signer   *sig.Signer
	verifier *sig.Verifier
	now      *time.Time
	nonces   *memNonces
}

// memNonces is a NonceStore for tests.
type memNonces struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func (m *memNonces) Reserve(_ context.Context, id sig.KeyID, nonce string, until time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := id.String() + "\x00" + nonce
	if _, ok := m.seen[k]; ok {
		return false, nil
	}
	m.seen[k] = until
	return true, nil
}

func staticKeys(pub crypto.PublicKey) sig.KeyResolver {
	return sig.KeyResolverFunc(func(_ context.Context, id sig.KeyID) (*sig.Key, error) {
		if id.String() != keyID {
			return nil, fmt.Errorf("no key %q: %w", id, sig.ErrUnknownKey)
		}
		return &sig.Key{Public: pub, Owner: actor}, nil
	})
}

func setup(t *testing.T, key crypto.Signer, vcfg *sig.VerifierConfig) *bundle {
	t.Helper()
	now := t0
	b := &bundle{now: &now, nonces: &memNonces{seen: map[string]time.Time{}}}
	clock := func() time.Time { return *b.now }
	var err error
	b.signer, err = sig.NewSigner(key, keyID, &sig.SignerConfig{Now: clock, Nonce: sig.RandomNonce, Expires: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	cfg := sig.VerifierConfig{}
	if vcfg != nil {
		cfg = *vcfg
	}
	cfg.Now = clock
	b.verifier, err = sig.NewVerifier(staticKeys(key.Public()), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// inbound turns a signed client request into what a server handler sees.
func inbound(t *testing.T, out *http.Request) *http.Request {
	t.Helper()
	var body io.Reader = http.NoBody
	if out.GetBody != nil {
		rc, _ := out.GetBody()
		body = rc
	}
	in := httptest.NewRequest(out.Method, out.URL.RequestURI(), body)
	in.Host = out.URL.Host
	in.Header = out.Header.Clone()
	return in
}

func newReq(t *testing.T, method, url, body string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestSignVerifyRoundTrip(t *testing.T) {
	t.Parallel()
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	keys := map[string]crypto.Signer{"rsa": testRSAKey(t), "ed25519": ed, "ecdsa-p256": ec}
	for kname, key := range keys {
		for _, scheme := range []sig.Scheme{sig.SchemeCavage, sig.SchemeRFC9421} {
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				t.Run(fmt.Sprintf("%s/%s/%s", kname, scheme, method), func(t *testing.T) {
					b := setup(t, key, nil)
					body := ""
					if method == http.MethodPost {
						body = `{"type":"Create"}`
					}
					out := newReq(t, method, "https://b.example/inbox?page=2", body)
					if err := b.signer.Sign(out, scheme); err != nil {
						t.Fatal(err)
					}
					in := inbound(t, out)
					res, err := b.verifier.Verify(in)
					if err != nil {
						t.Fatalf("Verify: %v\n%v", err, out.Header)
					}
					if res.KeyID.String() != keyID || res.Owner != actor || res.Scheme != scheme || !res.Created.Equal(t0) {
						t.Fatalf("result %+v", res)
					}
					got, _ := io.ReadAll(in.Body)
					if string(got) != body {
						t.Fatalf("body after verify = %q", got)
					}
				})
			}
		}
	}
}

// TestVerifyErrors checks each sentinel error is reachable and distinct.
func TestVerifyErrors(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	cases := []struct {
		name   string
		scheme sig.Scheme
		vcfg   *sig.VerifierConfig
		mutate func(b *bundle, out *http.Request) // before signing
		after  func(b *bundle, in *http.Request)  // after signing, on the inbound request
		want   error
	}{
		{"no signature", sig.SchemeCavage, nil, nil, func(b *bundle, in *http.Request) { in.Header.Del("Signature") }, sig.ErrNoSignature},
		{"cavage/too old", sig.SchemeCavage, nil, nil, func(b *bundle, _ *http.Request) { *b.now = t0.Add(12*time.Hour + time.Second) }, sig.ErrExpired},
		{"cavage/still fresh at 12h", sig.SchemeCavage, nil, nil, func(b *bundle, _ *http.Request) { *b.now = t0.Add(12 * time.Hour) }, nil},
		{"cavage/future", sig.SchemeCavage, nil, nil, func(b *bundle, _ *http.Request) { *b.now = t0.Add(-time.Hour - time.Second) }, sig.ErrExpired},
		{"cavage/skew ok", sig.SchemeCavage, nil, nil, func(b *bundle, _ *http.Request) { *b.now = t0.Add(-time.Hour) }, nil},
		{"9421/past expires+skew", sig.SchemeRFC9421, nil, nil, func(b *bundle, _ *http.Request) { *b.now = t0.Add(5*time.Minute + time.Hour + time.Second) }, sig.ErrExpired},
		{"9421/custom window", sig.SchemeRFC9421, &sig.VerifierConfig{MaxAge: time.Minute, Skew: time.Second}, nil,
			func(b *bundle, _ *http.Request) { *b.now = t0.Add(2 * time.Minute) }, sig.ErrExpired},
		{"cavage/unknown key", sig.SchemeCavage, nil, nil, func(b *bundle, in *http.Request) {
			in.Header.Set("Signature", strings.Replace(in.Header.Get("Signature"), "main-key", "other-key", 1))
		}, sig.ErrUnknownKey},
		{"cavage/digest mismatch", sig.SchemeCavage, nil, nil, func(b *bundle, in *http.Request) {
			in.Body = io.NopCloser(strings.NewReader(`{"type":"Delete"}`))
		}, sig.ErrDigestMismatch},
		{"9421/digest mismatch", sig.SchemeRFC9421, nil, nil, func(b *bundle, in *http.Request) {
			in.Body = io.NopCloser(strings.NewReader(`{"type":"Delete"}`))
		}, sig.ErrDigestMismatch},
		{"cavage/bad signature", sig.SchemeCavage, nil, nil, func(b *bundle, in *http.Request) { in.Header.Set("Date", t0.Add(time.Second).Format(http.TimeFormat)) }, sig.ErrBadSignature},
		{"9421/bad signature", sig.SchemeRFC9421, nil, nil, func(b *bundle, in *http.Request) { in.Method = http.MethodPut }, sig.ErrBadSignature},
		{"cavage/unsupported algorithm", sig.SchemeCavage, nil, nil, func(b *bundle, in *http.Request) {
			in.Header.Set("Signature", strings.Replace(in.Header.Get("Signature"), "rsa-sha256", "dsa-sha1", 1))
		}, sig.ErrUnsupportedAlgorithm},
		{"9421/unsupported algorithm", sig.SchemeRFC9421, nil, nil, func(b *bundle, in *http.Request) {
			in.Header.Set("Signature-Input", strings.Replace(in.Header.Get("Signature-Input"), "rsa-v1_5-sha256", "rsa-v1_5-sha1", 1))
		}, sig.ErrUnsupportedAlgorithm},
		{"cavage/host not signed", sig.SchemeCavage, nil, nil, func(b *bundle, in *http.Request) {
			in.Header.Set("Signature", strings.Replace(in.Header.Get("Signature"), " host", "", 1))
		}, sig.ErrMissingComponent},
		{"cavage/digest not signed", sig.SchemeCavage, nil, nil, func(b *bundle, in *http.Request) {
			in.Header.Set("Signature", strings.Replace(in.Header.Get("Signature"), " digest", "", 1))
		}, sig.ErrMissingComponent},
		{"9421/content-digest not covered", sig.SchemeRFC9421, nil, nil, func(b *bundle, in *http.Request) {
			in.Header.Set("Signature-Input", strings.Replace(in.Header.Get("Signature-Input"), ` "content-digest"`, "", 1))
		}, sig.ErrMissingComponent},
		{"9421/replay", sig.SchemeRFC9421, &sig.VerifierConfig{Nonces: &memNonces{seen: map[string]time.Time{}}}, nil, nil, sig.ErrReplay},
		{"9421/label not found", sig.SchemeRFC9421, &sig.VerifierConfig{Label: "other"}, nil, nil, sig.ErrNoSignature},
		{"9421/tag not found", sig.SchemeRFC9421, &sig.VerifierConfig{Tag: "x"}, nil, nil, sig.ErrNoSignature},
		{"cavage/malformed", sig.SchemeCavage, nil, nil, func(b *bundle, in *http.Request) { in.Header.Set("Signature", `keyId="x",signature="%%%"`) }, sig.ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, key, tc.vcfg)
			out := newReq(t, http.MethodPost, "https://b.example/inbox", `{"type":"Create"}`)
			if err := b.signer.Sign(out, tc.scheme); err != nil {
				t.Fatal(err)
			}
			in := inbound(t, out)
			if tc.after != nil {
				tc.after(b, in)
			}
			_, err := b.verifier.Verify(in)
			if tc.name == "9421/replay" {
				if err != nil {
					t.Fatalf("first verify: %v", err)
				}
				_, err = b.verifier.Verify(inbound(t, out))
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify error = %v, want %v", err, tc.want)
			}
			for _, other := range []error{sig.ErrNoSignature, sig.ErrExpired, sig.ErrUnknownKey, sig.ErrDigestMismatch,
				sig.ErrBadSignature, sig.ErrUnsupportedAlgorithm, sig.ErrMissingComponent} {
				if other != tc.want && errors.Is(err, other) {
					t.Errorf("error %v also matches %v", err, other)
				}
			}
		})
	}
}

// TestCavageQuerylessTarget accepts a (request-target) signed without the
// query string, as older Mastodon signed GETs.
func TestCavageQuerylessTarget(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	b := setup(t, key, nil)
	out := newReq(t, http.MethodGet, "https://b.example/users/x/outbox", "")
	out.Header.Set("Date", t0.Format(http.TimeFormat))
	if err := sig.SignCavage(out, key, keyID, []string{"date", "host", "(request-target)"}); err != nil {
		t.Fatal(err)
	}
	in := inbound(t, out)
	in.URL.RawQuery = "page=true"
	in.RequestURI += "?page=true"
	if _, err := b.verifier.Verify(in); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

// TestCavageCreatedHS2019 verifies an hs2019 signature over (created) and
// (expires), with headers in an unusual order.
func TestCavageCreatedHS2019(t *testing.T) {
	t.Parallel()
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	b := setup(t, ed, nil)
	out := newReq(t, http.MethodGet, "https://b.example/notes/1", "")
	cs := &sig.CavageSignature{KeyID: keyID, Algorithm: "hs2019", Headers: []string{"host", "(expires)", "(request-target)", "(created)"},
		Created: t0, Expires: t0.Add(time.Minute)}
	str := "host: b.example\n(expires): " + fmt.Sprint(t0.Add(time.Minute).Unix()) + "\n(request-target): get /notes/1\n(created): " + fmt.Sprint(t0.Unix())
	cs.Signature = ed25519.Sign(ed, []byte(str))
	out.Header.Set("Signature", cs.String())
	if _, err := b.verifier.Verify(inbound(t, out)); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	*b.now = t0.Add(time.Minute + time.Hour + time.Second)
	if _, err := b.verifier.Verify(inbound(t, out)); !errors.Is(err, sig.ErrExpired) {
		t.Fatalf("after expires: %v", err)
	}
}

// TestSelectByLabelAndTag verifies the chosen one of two signatures.
func TestSelectByLabelAndTag(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	out := newReq(t, http.MethodGet, "https://b.example/x", "")
	out.Header.Set("Date", t0.Format(http.TimeFormat))
	comps := []string{"@method", "@target-uri", "@authority", "date"}
	if err := sig.SignRFC9421(out, other, &sig.SignOpts{Label: "first", Components: comps, KeyID: "https://c.example/k", Tag: "t1", Created: t0}); err != nil {
		t.Fatal(err)
	}
	if err := sig.SignRFC9421(out, key, &sig.SignOpts{Label: "second", Components: comps, KeyID: keyID, Tag: "t2", Created: t0}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  sig.VerifierConfig
		want error
	}{
		{"by label", sig.VerifierConfig{Label: "second"}, nil},
		{"by tag", sig.VerifierConfig{Tag: "t2"}, nil},
		{"first is unknown key", sig.VerifierConfig{}, sig.ErrUnknownKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Now = func() time.Time { return t0 }
			v, _ := sig.NewVerifier(staticKeys(key.Public()), &tc.cfg)
			res, err := v.Verify(inbound(t, out))
			if !errors.Is(err, tc.want) || (err == nil && res.Label != "second") {
				t.Fatalf("Verify = %+v, %v", res, err)
			}
		})
	}
}

func TestMiddleware(t *testing.T) {
	t.Parallel()
	key := testRSAKey(t)
	b := setup(t, key, &sig.VerifierConfig{URLScheme: "http"})
	var got *sig.Result
	srv := httptest.NewServer(b.verifier.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = sig.ResultFromContext(r.Context())
		body, _ := io.ReadAll(r.Body)
		_, _ = w.Write(body)
	})))
	defer srv.Close()
	for _, tc := range []struct {
		name   string
		sign   bool
		status int
	}{{"signed", true, 200}, {"unsigned", false, 401}} {
		req := newReq(t, http.MethodPost, srv.URL+"/inbox", `{"a":1}`)
		if tc.sign {
			if err := b.signer.Sign(req, sig.SchemeRFC9421); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Fatalf("%s: status %d %s", tc.name, resp.StatusCode, body)
		}
		if tc.sign && (string(body) != `{"a":1}` || got == nil || got.Owner != actor) {
			t.Fatalf("%s: body %q result %+v", tc.name, body, got)
		}
	}
}

func TestSignerRefusesWeakRSA(t *testing.T) {
	t.Parallel()
	k, err := sig.ParsePrivateKeyPEM([]byte(cavageTestPrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sig.NewSigner(k, keyID, nil); !errors.Is(err, sig.ErrWeakKey) {
		t.Fatalf("NewSigner(1024-bit) = %v", err)
	}
	req := newReq(t, http.MethodGet, "https://b.example/", "")
	if err := sig.SignRFC9421(req, k, &sig.SignOpts{Components: []string{"@method"}}); !errors.Is(err, sig.ErrWeakKey) {
		t.Fatalf("SignRFC9421(1024-bit) = %v", err)
	}
}

// TestSignerConcurrent signs from many goroutines with a per-request clock.
func TestSignerConcurrent(t *testing.T) {
	t.Parallel()
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	b := setup(t, ed, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Go(func() {
			req := newReq(t, http.MethodPost, fmt.Sprintf("https://b.example/inbox/%d", i), "{}")
			if err := b.signer.Sign(req, sig.Scheme(1+i%2)); err != nil {
				errs <- err
				return
			}
			if _, err := b.verifier.Verify(inbound(t, req)); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
