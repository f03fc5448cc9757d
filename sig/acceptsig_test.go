package sig_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/sig"
)

// rfcAcceptSignature is RFC 9421 section 5.1's example, unfolded.
const rfcAcceptSignature = `sig1=("@method" "@target-uri" "@authority" "content-digest" "cache-control");keyid="test-key-rsa-pss";created;tag="app-123"`

func TestParseAcceptSignature(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		field string
		want  []sig.AcceptSignature
	}{
		{"RFC 9421 5.1 example", rfcAcceptSignature, []sig.AcceptSignature{{
			Label:      "sig1",
			Components: []string{`"@method"`, `"@target-uri"`, `"@authority"`, `"content-digest"`, `"cache-control"`},
			KeyID:      "test-key-rsa-pss", Tag: "app-123", Created: true,
		}}},
		{"Mastodon 4.5's requirements", `sig1=("@method" "@target-uri" "content-digest");created;alg="rsa-v1_5-sha256"`, []sig.AcceptSignature{{
			Label: "sig1", Components: []string{`"@method"`, `"@target-uri"`, `"content-digest"`},
			Alg: "rsa-v1_5-sha256", Created: true,
		}}},
		{"two members, component parameters, nonce and expires", `a=("@query-param";name="pet" "example-dict";sf);nonce;expires, b=("@method")`, []sig.AcceptSignature{
			{Label: "a", Components: []string{`"@query-param";name="pet"`, `"example-dict";sf`}, Nonce: true, Expires: true},
			{Label: "b", Components: []string{`"@method"`}},
		}},
		{"created=false is not asked", `s=("@method");created=?0`, []sig.AcceptSignature{{Label: "s", Components: []string{`"@method"`}}}},
		{"unknown parameter ignored", `s=("@method");foo=1`, []sig.AcceptSignature{{Label: "s", Components: []string{`"@method"`}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := sig.ParseAcceptSignature(http.Header{"Accept-Signature": {tc.field}})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if !equalAccept(got[i], tc.want[i]) {
					t.Fatalf("member %d: got %+v, want %+v", i, got[i], tc.want[i])
				}
				// Serialising and parsing again gives the same member.
				again, err := sig.ParseAcceptSignature(http.Header{"Accept-Signature": {got[i].String()}})
				if err != nil || len(again) != 1 || !equalAccept(again[0], got[i]) {
					t.Fatalf("round trip of %q: %+v, %v", got[i].String(), again, err)
				}
			}
		})
	}
}

func equalAccept(a, b sig.AcceptSignature) bool {
	return a.Label == b.Label && slices.Equal(a.Components, b.Components) && a.Alg == b.Alg && a.KeyID == b.KeyID &&
		a.Tag == b.Tag && a.Created == b.Created && a.Expires == b.Expires && a.Nonce == b.Nonce
}

func TestParseAcceptSignatureMalformed(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, field string }{
		{"not a dictionary", `("@method")`},
		{"member not an inner list", `sig1="@method"`},
		{"component not a string", `sig1=(method)`},
		{"keyid not a string", `sig1=("@method");keyid=1`},
		{"alg not a string", `sig1=("@method");alg=?1`},
		{"too many members", `a=(), b=(), c=(), d=(), e=(), f=(), g=(), h=(), i=()`},
		{"too many components", `a=(` + strings.Repeat(`"x" `, 65) + `)`},
		{"too large", `a=("` + strings.Repeat("x", 17<<10) + `")`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := sig.ParseAcceptSignature(http.Header{"Accept-Signature": {tc.field}})
			if !errors.Is(err, sig.ErrMalformed) {
				t.Fatalf("err %v, want ErrMalformed", err)
			}
		})
	}
	if got, err := sig.ParseAcceptSignature(http.Header{}); got != nil || err != nil {
		t.Fatalf("no field: %v, %v", got, err)
	}
}

// Signing as RFC 9421's example asks, with test-key-rsa-pss: the label, the
// components in order, the key ID and the tag are the ones asked for, and
// the signature verifies.
func TestSignAcceptedRFCExample(t *testing.T) {
	t.Parallel()
	as, err := sig.ParseAcceptSignature(http.Header{"Accept-Signature": {rfcAcceptSignature}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sig.NewSigner(mustPriv(t, rfcKeyRSAPSSPrivate), "test-key-rsa-pss", &sig.SignerConfig{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	req := rfcTestRequest(t)
	req.Header.Del("Content-Digest")
	req.Header.Set("Cache-Control", "max-age=60")
	if !s.CanSignAccepted(&as[0]) {
		t.Fatal("CanSignAccepted false for the RFC example")
	}
	if err := s.SignAccepted(req, &as[0]); err != nil {
		t.Fatal(err)
	}
	if err := sig.VerifyContentDigest(req.Header["Content-Digest"], []byte(`{"hello": "world"}`)); err != nil {
		t.Fatalf("Content-Digest %q: %v", req.Header.Get("Content-Digest"), err)
	}
	sigs, err := sig.ParseRFC9421Signatures(req.Header)
	if err != nil {
		t.Fatal(err)
	}
	got := sigs[0]
	if got.Label != "sig1" || got.KeyID != "test-key-rsa-pss" || got.Tag != "app-123" || !got.Created.Equal(t0) {
		t.Fatalf("signature %+v, want label sig1, keyid test-key-rsa-pss, tag app-123, created", got)
	}
	if want := []string{`"@method"`, `"@target-uri"`, `"@authority"`, `"content-digest"`, `"cache-control"`}; !slices.Equal(got.Components(), want) {
		t.Fatalf("components %v, want %v", got.Components(), want)
	}
	if err := sig.VerifyRFC9421(req, got, mustPub(t, rfcKeyRSAPSSPublic), ""); err != nil {
		t.Fatalf("does not verify: %v", err)
	}
}

func TestSignAcceptedRefusals(t *testing.T) {
	t.Parallel()
	_, ed, _ := ed25519.GenerateKey(nil)
	s, err := sig.NewSigner(ed, "https://a.example/actor#ed", nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		a    sig.AcceptSignature
		want error
	}{
		{"algorithm the key cannot do", sig.AcceptSignature{Label: "s", Components: []string{`"@method"`}, Alg: sig.AlgRSAv15SHA256}, sig.ErrUnsupportedAlgorithm},
		{"another key", sig.AcceptSignature{Label: "s", Components: []string{`"@method"`}, KeyID: "https://a.example/actor#rsa"}, sig.ErrUnknownKey},
		{"a field the request lacks", sig.AcceptSignature{Label: "s", Components: []string{`"@method"`, `"cache-control"`}}, sig.ErrMissingComponent},
		{"no components", sig.AcceptSignature{Label: "s"}, sig.ErrMissingComponent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := newReq(t, "POST", "https://b.example/inbox", `{}`)
			if err := s.SignAccepted(req, &tc.a); !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if tc.want != sig.ErrMissingComponent && s.CanSignAccepted(&tc.a) {
				t.Fatal("CanSignAccepted true")
			}
		})
	}
}

// The middleware's 401 says what the verifier accepts, and a signer that
// signs as it says is let through.
func TestMiddlewareSendsAcceptSignature(t *testing.T) {
	t.Parallel()
	_, ed, _ := ed25519.GenerateKey(nil)
	keys := sig.KeyResolverFunc(func(context.Context, sig.KeyID) (*sig.Key, error) { return &sig.Key{Public: ed.Public()}, nil })
	v, err := sig.NewVerifier(keys, &sig.VerifierConfig{URLScheme: "http", Label: "in"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(202) })))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/inbox", "application/activity+json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	as, err := sig.ParseAcceptSignature(resp.Header)
	if resp.StatusCode != 401 || err != nil || len(as) != 1 {
		t.Fatalf("status %d, Accept-Signature %q (%v)", resp.StatusCode, resp.Header.Get("Accept-Signature"), err)
	}
	want := sig.AcceptSignature{Label: "in", Components: []string{`"@method"`, `"@target-uri"`, `"@authority"`, `"content-digest"`}, Created: true}
	if !equalAccept(as[0], want) {
		t.Fatalf("asked %+v, want %+v", as[0], want)
	}
	s, _ := sig.NewSigner(ed, "https://a.example/actor#ed", nil)
	req := newReq(t, "POST", srv.URL+"/inbox", `{}`)
	if err := s.SignAccepted(req, &as[0]); err != nil {
		t.Fatal(err)
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 202 {
		t.Fatalf("signed as asked: status %d", resp.StatusCode)
	}
}
