package sig_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/fedkit/fedkit/sig"
)

// ExampleNewVerifier verifies a signed request with a key resolver.
func ExampleNewVerifier() {
	key := exampleKey()
	keys := sig.KeyResolverFunc(func(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
		// A real resolver fetches id.Document() and checks the key's owner.
		return &sig.Key{Public: key.Public(), Owner: "https://a.example/actor"}, nil
	})
	v, err := sig.NewVerifier(keys, nil)
	if err != nil {
		panic(err)
	}
	s, _ := sig.NewSigner(key, "https://a.example/actor#main-key", nil)
	out, _ := http.NewRequest("POST", "https://b.example/inbox", bytes.NewReader([]byte(`{}`)))
	_ = s.Sign(out, sig.SchemeRFC9421)
	in := httptest.NewRequest("POST", "https://b.example/inbox", bytes.NewReader([]byte(`{}`)))
	in.Header = out.Header
	res, err := v.Verify(in)
	fmt.Println(res.Owner, res.Scheme, err)
	// Output: https://a.example/actor rfc9421 <nil>
}

// ExampleVerifier_Verify refuses a signature older than MaxAge.
func ExampleVerifier_Verify() {
	key := exampleKey()
	now := time.Unix(1785933296, 0)
	s, _ := sig.NewSigner(key, "https://a.example/actor#main-key", &sig.SignerConfig{Now: func() time.Time { return now }})
	v, _ := sig.NewVerifier(sig.KeyResolverFunc(func(context.Context, sig.KeyID) (*sig.Key, error) {
		return &sig.Key{Public: key.Public(), Owner: "https://a.example/actor"}, nil
	}), &sig.VerifierConfig{Now: func() time.Time { return now.Add(13 * time.Hour) }})
	out, _ := http.NewRequest("POST", "https://b.example/inbox", bytes.NewReader([]byte(`{}`)))
	_ = s.Sign(out, sig.SchemeCavage)
	in := httptest.NewRequest("POST", "/inbox", bytes.NewReader([]byte(`{}`)))
	in.Host, in.Header = "b.example", out.Header
	_, err := v.Verify(in)
	fmt.Println(errors.Is(err, sig.ErrExpired))
	// Output: true
}

// ExampleVerifier_Middleware guards an inbox: only verified requests reach
// the handler, which reads the signer from the context.
func ExampleVerifier_Middleware() {
	key := exampleKey()
	keys := sig.KeyResolverFunc(func(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
		if id.String() != "https://a.example/actor#main-key" {
			return nil, sig.ErrUnknownKey
		}
		return &sig.Key{Public: key.Public(), Owner: "https://a.example/actor"}, nil
	})
	v, _ := sig.NewVerifier(keys, &sig.VerifierConfig{URLScheme: "http"})
	inbox := v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, _ := sig.ResultFromContext(r.Context())
		fmt.Fprint(w, res.Owner, " via ", res.Scheme)
	}))
	srv := httptest.NewServer(inbox)
	defer srv.Close()

	s, _ := sig.NewSigner(key, "https://a.example/actor#main-key", nil)
	req, _ := http.NewRequest("POST", srv.URL+"/inbox", bytes.NewReader([]byte(`{}`)))
	_ = s.Sign(req, sig.SchemeRFC9421)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	fmt.Println(resp.StatusCode, b.String())
	// Output: 200 https://a.example/actor via rfc9421
}

// ExampleNewMemoryNonceStore refuses replayed RFC 9421 signatures.
func ExampleNewMemoryNonceStore() {
	keys := sig.KeyResolverFunc(func(context.Context, sig.KeyID) (*sig.Key, error) { return nil, sig.ErrUnknownKey })
	// With Nonces set, RFC 9421 signatures must carry a nonce, and a
	// (keyid, nonce) pair seen before is refused with ErrReplay.
	v, err := sig.NewVerifier(keys, &sig.VerifierConfig{Nonces: sig.NewMemoryNonceStore(nil)})
	fmt.Println(v != nil, err)
	// Output: true <nil>
}

// ExampleResultFromContext reads, in a handler behind Verifier.Middleware,
// who signed the request.
func ExampleResultFromContext() {
	keys := sig.KeyResolverFunc(func(context.Context, sig.KeyID) (*sig.Key, error) { return nil, sig.ErrUnknownKey })
	v, _ := sig.NewVerifier(keys, nil)
	http.Handle("POST /inbox", v.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok := sig.ResultFromContext(r.Context())
		if !ok {
			return // not behind the middleware
		}
		fmt.Fprintln(w, res.Owner, res.KeyID, res.Scheme)
	})))
}

// ExampleSchemeMismatchError tells a misconfigured proxy from a forgery: a
// server behind a TLS-terminating proxy sees http, but the sender signed
// the https URL.
func ExampleSchemeMismatchError() {
	key := exampleKey()
	keys := sig.KeyResolverFunc(func(context.Context, sig.KeyID) (*sig.Key, error) {
		return &sig.Key{Public: key.Public(), Owner: "https://a.example/actor"}, nil
	})
	v, _ := sig.NewVerifier(keys, &sig.VerifierConfig{URLScheme: "http"})
	s, _ := sig.NewSigner(key, "https://a.example/actor#main-key", nil)
	out, _ := http.NewRequest("GET", "https://b.example/users/bob", nil)
	_ = s.Sign(out, sig.SchemeRFC9421)
	in := httptest.NewRequest("GET", "/users/bob", nil)
	in.Host, in.Header = "b.example", out.Header
	_, err := v.Verify(in)
	var sm *sig.SchemeMismatchError
	fmt.Println(errors.As(err, &sm), sm.Signed, sm.Configured, errors.Is(err, sig.ErrBadSignature))
	// Output: true https http true
}
