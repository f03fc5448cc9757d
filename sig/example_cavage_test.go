package sig_test

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/fedkit/fedkit/sig"
)

// ExampleSignCavage signs with draft-cavage over chosen headers.
func ExampleSignCavage() {
	req, _ := http.NewRequest("GET", "https://b.example/users/bob?page=1", nil)
	req.Header.Set("Date", "Wed, 05 Aug 2026 12:34:56 GMT")
	err := sig.SignCavage(req, exampleKey(), "https://a.example/actor#main-key", []string{"(request-target)", "host", "date"})
	cs, _ := sig.ParseCavageSignature(req.Header.Get("Signature"))
	fmt.Println(err, cs.Algorithm, cs.Headers)
	// Output: <nil> ed25519 [(request-target) host date]
}

// ExampleVerifyCavage checks a draft-cavage signature, and fails once a
// covered header changes.
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

// ExampleParseCavageSignature reads a draft-cavage Signature header.
func ExampleParseCavageSignature() {
	cs, err := sig.ParseCavageSignature(`keyId="https://a.example/actor#main-key",algorithm="rsa-sha256",headers="(request-target) host date digest",signature="YQ=="`)
	fmt.Println(cs.KeyID, cs.Headers, err)
	// Output: https://a.example/actor#main-key [(request-target) host date digest] <nil>
}

// ExampleCavageSigningString shows what a draft-cavage signature covers.
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
