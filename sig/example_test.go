package sig_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/fedkit/fedkit/sig"
)

func exampleKey() ed25519.PrivateKey {
	_, k, _ := ed25519.GenerateKey(rand.Reader)
	return k
}

func ExampleNewSigner() {
	key := exampleKey()
	s, err := sig.NewSigner(key, "https://a.example/actor#main-key", nil)
	if err != nil {
		panic(err)
	}
	req, _ := http.NewRequest("POST", "https://b.example/inbox", bytes.NewReader([]byte(`{"type":"Follow"}`)))
	if err := s.Sign(req, sig.SchemeCavage); err != nil {
		panic(err)
	}
	fmt.Println(req.Header.Get("Digest"))
	// Output: SHA-256=GYwYnH3BiO6aICFt0ThC5bUIJ4byvqdpWtR8m5fNkww=
}

func ExampleSigner_Sign() {
	s, _ := sig.NewSigner(exampleKey(), "https://a.example/actor#main-key", &sig.SignerConfig{
		Now:   func() time.Time { return time.Unix(1785933296, 0) },
		Nonce: func() (string, error) { return "n-1", nil },
	})
	req, _ := http.NewRequest("GET", "https://b.example/users/bob", nil)
	_ = s.Sign(req, sig.SchemeRFC9421)
	fmt.Println(req.Header.Get("Signature-Input"))
	// Output: sig1=("@method" "@target-uri" "@authority" "date");keyid="https://a.example/actor#main-key";alg="ed25519";nonce="n-1";created=1785933296
}

func ExampleSignRFC9421() {
	key := exampleKey()
	body := []byte(`{"protocol_version":1}`)
	created := time.Unix(1785933296, 0)
	req, _ := http.NewRequest("POST", "https://directory.example/v1/relays/register", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Date", created.UTC().Format(http.TimeFormat))
	req.Header.Set("Content-Digest", sig.ContentDigest(body))
	err := sig.SignRFC9421(req, key, &sig.SignOpts{
		Label:      "directory",
		Components: []string{"@method", "@authority", "@target-uri", "content-digest", "content-type", "date"},
		KeyID:      "https://relay.example/actor#main-key",
		Alg:        sig.AlgEd25519,
		Tag:        "activity-relay-directory-v1",
		Nonce:      "fixture-nonce-0001",
		Created:    created,
		Expires:    created.Add(300 * time.Second),
	})
	fmt.Println(err, req.Header.Get("Signature-Input"))
	// Output: <nil> directory=("@method" "@authority" "@target-uri" "content-digest" "content-type" "date");keyid="https://relay.example/actor#main-key";alg="ed25519";tag="activity-relay-directory-v1";nonce="fixture-nonce-0001";created=1785933296;expires=1785933596
}

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

func ExampleParseCavageSignature() {
	cs, err := sig.ParseCavageSignature(`keyId="https://a.example/actor#main-key",algorithm="rsa-sha256",headers="(request-target) host date digest",signature="YQ=="`)
	fmt.Println(cs.KeyID, cs.Headers, err)
	// Output: https://a.example/actor#main-key [(request-target) host date digest] <nil>
}

func ExampleParseRFC9421Signatures() {
	h := http.Header{}
	h.Set("Signature-Input", `sig1=("@method" "@target-uri");created=1618884473;keyid="k";tag="t"`)
	h.Set("Signature", `sig1=:YQ==:`)
	sigs, err := sig.ParseRFC9421Signatures(h)
	fmt.Println(sigs[0].Label, sigs[0].Components(), sigs[0].Tag, sigs[0].Created.Unix(), err)
	// Output: sig1 ["@method" "@target-uri"] t 1618884473 <nil>
}

func ExampleContentDigest() {
	fmt.Println(sig.ContentDigest([]byte(`{"hello": "world"}`)))
	fmt.Println(sig.VerifyContentDigest([]string{"sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"}, []byte(`{"hello": "world"}`)))
	// Output:
	// sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:
	// <nil>
}

func ExampleDigest() {
	fmt.Println(sig.Digest([]byte(`{"hello": "world"}`)))
	// Output: SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=
}

func ExampleParseMultikey() {
	pub, err := sig.ParseMultikey("z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2")
	fmt.Printf("%T %v\n", pub, err)
	s, _ := sig.FormatMultikey(pub)
	fmt.Println(s)
	// Output:
	// ed25519.PublicKey <nil>
	// z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2
}

func ExampleParseKeyID() {
	id, err := sig.ParseKeyID("https://a.example/actor#main-key")
	fmt.Println(id.Document(), err)
	_, err = sig.ParseKeyID(" https://a.example/actor#main-key")
	fmt.Println(errors.Is(err, sig.ErrMalformed))
	// Output:
	// https://a.example/actor <nil>
	// true
}

func ExampleParsePrivateKeyPEM() {
	key, err := sig.ParsePrivateKeyPEM([]byte(testRSAPEM))
	if err != nil {
		panic(err)
	}
	pemText, _ := sig.MarshalPublicKeyPEM(key.Public())
	fmt.Println(string(pemText[:26]))
	// Output: -----BEGIN PUBLIC KEY-----
}

func ExampleWithDataIntegrityContext() {
	doc := sig.WithDataIntegrityContext(map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams",
		"type":     "Note",
	})
	fmt.Println(doc["@context"])
	// Output: [https://w3id.org/security/data-integrity/v2 https://www.w3.org/ns/activitystreams]
}

func ExampleCreateProof() {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	doc := sig.WithDataIntegrityContext(map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams",
		"type":     "Create",
		"actor":    "https://a.example/actor",
	})
	signed, err := sig.CreateProof(doc, priv, &sig.ProofOpts{VerificationMethod: "https://a.example/actor#ed25519-key", Created: time.Now()})
	if err != nil {
		panic(err)
	}
	p, err := sig.VerifyProof(signed, pub)
	fmt.Println(p.VerificationMethod, err)
	// Output: https://a.example/actor#ed25519-key <nil>
}

func ExampleNewMemoryNonceStore() {
	keys := sig.KeyResolverFunc(func(context.Context, sig.KeyID) (*sig.Key, error) { return nil, sig.ErrUnknownKey })
	// With Nonces set, RFC 9421 signatures must carry a nonce, and a
	// (keyid, nonce) pair seen before is refused with ErrReplay.
	v, err := sig.NewVerifier(keys, &sig.VerifierConfig{Nonces: sig.NewMemoryNonceStore(nil)})
	fmt.Println(v != nil, err)
	// Output: true <nil>
}

func ExampleRFC9421SignatureBase() {
	req, _ := http.NewRequest("GET", "https://example.com/foo?param=Value&Pet=dog", nil)
	base, _, _ := sig.RFC9421SignatureBase(req, &sig.SignOpts{
		Components: []string{"@method", "@authority", `@query-param;name="Pet"`},
		KeyID:      "k", Created: time.Unix(1618884473, 0),
	})
	fmt.Println(string(base))
	// Output:
	// "@method": GET
	// "@authority": example.com
	// "@query-param";name="Pet": dog
	// "@signature-params": ("@method" "@authority" "@query-param";name="Pet");keyid="k";created=1618884473
}

func ExampleSignCavage() {
	req, _ := http.NewRequest("GET", "https://b.example/users/bob?page=1", nil)
	req.Header.Set("Date", "Wed, 05 Aug 2026 12:34:56 GMT")
	err := sig.SignCavage(req, exampleKey(), "https://a.example/actor#main-key", []string{"(request-target)", "host", "date"})
	cs, _ := sig.ParseCavageSignature(req.Header.Get("Signature"))
	fmt.Println(err, cs.Algorithm, cs.Headers)
	// Output: <nil> ed25519 [(request-target) host date]
}

func ExampleCavageSigningString() {
	req, _ := http.NewRequest("POST", "https://b.example/inbox?x=1", nil)
	req.Header.Set("Date", "Wed, 05 Aug 2026 12:34:56 GMT")
	s, _ := sig.CavageSigningString(req, &sig.CavageSignature{Headers: []string{"(request-target)", "host", "date"}})
	fmt.Println(s)
	// Output:
	// (request-target): post /inbox?x=1
	// host: b.example
	// date: Wed, 05 Aug 2026 12:34:56 GMT
}

func ExampleVerifyCavage() {
	key := exampleKey()
	req, _ := http.NewRequest("GET", "https://b.example/users/bob", nil)
	req.Header.Set("Date", "Wed, 05 Aug 2026 12:34:56 GMT")
	_ = sig.SignCavage(req, key, "k", []string{"(request-target)", "host", "date"})
	cs, _ := sig.ParseCavageSignature(req.Header.Get("Signature"))
	fmt.Println(sig.VerifyCavage(req, cs, key.Public()))
	req.Header.Set("Date", "Thu, 06 Aug 2026 12:34:56 GMT")
	fmt.Println(errors.Is(sig.VerifyCavage(req, cs, key.Public()), sig.ErrBadSignature))
	// Output:
	// <nil>
	// true
}

func ExampleVerifyRFC9421() {
	key := exampleKey()
	req, _ := http.NewRequest("GET", "https://b.example/users/bob", nil)
	_ = sig.SignRFC9421(req, key, &sig.SignOpts{Components: []string{"@method", "@target-uri"}, KeyID: "k", Created: time.Unix(1785933296, 0)})
	sigs, _ := sig.ParseRFC9421Signatures(req.Header)
	fmt.Println(sigs[0].KeyID, sig.VerifyRFC9421(req, sigs[0], key.Public(), ""))
	// Output: k <nil>
}

func ExampleSignRFC9421Response() {
	key := exampleKey()
	req, _ := http.NewRequest("POST", "https://b.example/inbox", nil)
	resp := &http.Response{StatusCode: 202, Header: http.Header{}, Request: req}
	err := sig.SignRFC9421Response(resp, key, &sig.SignOpts{Components: []string{"@status", "@method;req", "@target-uri;req"}, Created: time.Unix(1785933296, 0)})
	sigs, _ := sig.ParseRFC9421Signatures(resp.Header)
	fmt.Println(err, sig.VerifyRFC9421Response(resp, sigs[0], key.Public(), ""))
	// Output: <nil> <nil>
}

func ExampleSigner_SignRFC9421() {
	s, _ := sig.NewSigner(exampleKey(), "https://relay.example/actor#main-key", &sig.SignerConfig{
		Now: func() time.Time { return time.Unix(1785933296, 400) },
	})
	req, _ := http.NewRequest("POST", "https://directory.example/v1/relays/heartbeat", nil)
	_ = s.SignRFC9421(req, &sig.SignOpts{Label: "directory", Components: []string{"@method", "@target-uri"}, Tag: "activity-relay-directory-v1"})
	fmt.Println(req.Header.Get("Signature-Input"))
	// Output: directory=("@method" "@target-uri");keyid="https://relay.example/actor#main-key";tag="activity-relay-directory-v1";created=1785933296
}

func ExampleRandomNonce() {
	n, err := sig.RandomNonce()
	fmt.Println(len(n), err)
	// Output: 32 <nil>
}

func ExampleParsePublicKeyPEM() {
	pub, err := sig.ParsePublicKeyPEM([]byte("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n-----END PUBLIC KEY-----\n"))
	fmt.Printf("%T %v\n", pub, err)
	// Output: ed25519.PublicKey <nil>
}

func ExampleParseContentDigest() {
	vals, err := sig.ParseContentDigest([]string{"sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:, unixsum=:AAAA:"})
	fmt.Println(len(vals), vals[0].Alg, vals[1].Alg, err)
	// Output: 2 sha-256 unixsum <nil>
}

func ExampleVerifyDigest() {
	err := sig.VerifyDigest([]string{"SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="}, []byte(`{"hello": "world"}`))
	fmt.Println(err)
	err = sig.VerifyDigest([]string{"SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="}, []byte(`{"hello": "moon"}`))
	fmt.Println(errors.Is(err, sig.ErrDigestMismatch))
	// Output:
	// <nil>
	// true
}

func ExampleParseProof() {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signed, _ := sig.CreateProof(map[string]any{"type": "Note"}, priv, &sig.ProofOpts{VerificationMethod: "https://a.example/actor#ed"})
	p, err := sig.ParseProof(signed)
	fmt.Println(p.VerificationMethod, p.ProofPurpose, err)
	// Output: https://a.example/actor#ed assertionMethod <nil>
}

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

func ExampleVerifyProof() {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	signed, _ := sig.CreateProof(map[string]any{"type": "Note", "content": "hi"}, priv,
		&sig.ProofOpts{VerificationMethod: "https://a.example/actor#ed25519-key"})
	_, err := sig.VerifyProof(signed, pub)
	fmt.Println(err)
	signed["content"] = "bye"
	_, err = sig.VerifyProof(signed, pub)
	fmt.Println(errors.Is(err, sig.ErrBadSignature))
	// Output:
	// <nil>
	// true
}

func ExampleVerifyContentDigest() {
	body := []byte(`{"hello": "world"}`)
	fmt.Println(sig.VerifyContentDigest([]string{sig.ContentDigest(body)}, body))
	err := sig.VerifyContentDigest([]string{sig.ContentDigest(body)}, []byte(`{"hello": "moon"}`))
	fmt.Println(errors.Is(err, sig.ErrDigestMismatch))
	// Output:
	// <nil>
	// true
}

func ExampleParseDigest() {
	vals, err := sig.ParseDigest([]string{"SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=, unixsum=30637"})
	fmt.Println(len(vals), vals[0].Alg, len(vals[0].Sum), vals[1].Alg, vals[1].Sum == nil, err)
	// Output: 2 sha-256 32 unixsum true <nil>
}

func ExampleMarshalPrivateKeyPEM() {
	key := exampleKey()
	pemText, err := sig.MarshalPrivateKeyPEM(key)
	if err != nil {
		panic(err)
	}
	back, err := sig.ParsePrivateKeyPEM(pemText)
	fmt.Println(string(pemText[:27]), back.Public().(ed25519.PublicKey).Equal(key.Public()), err)
	// Output: -----BEGIN PRIVATE KEY----- true <nil>
}

func ExampleMarshalPublicKeyPEM() {
	pemText, err := sig.MarshalPublicKeyPEM(exampleKey().Public())
	fmt.Println(string(pemText[:26]), err)
	// Output: -----BEGIN PUBLIC KEY----- <nil>
}

func ExampleFormatMultikey() {
	pub, _ := sig.ParsePublicKeyPEM([]byte("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=\n-----END PUBLIC KEY-----\n"))
	mk, err := sig.FormatMultikey(pub)
	fmt.Println(mk[:4], err)
	// Output: z6Mk <nil>
}

func ExampleLoadOrGenerateKey() {
	// The first run writes actor.pem (0600); later runs load it.
	key, err := sig.LoadOrGenerateKey("/var/lib/myserver/actor.pem", sig.KeyRSA2048)
	if errors.Is(err, sig.ErrKeyFileMode) {
		log.Fatal("chmod 600 the key file")
	}
	if err != nil {
		log.Fatal(err)
	}
	_ = key
}
