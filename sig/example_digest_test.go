package sig_test

import (
	"errors"
	"fmt"

	"github.com/fedkit/fedkit/sig"
)

// ExampleContentDigest writes and checks an RFC 9530 Content-Digest.
func ExampleContentDigest() {
	fmt.Println(sig.ContentDigest([]byte(`{"hello": "world"}`)))
	fmt.Println(sig.VerifyContentDigest([]string{"sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:"}, []byte(`{"hello": "world"}`)))
	// Output:
	// sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:
	// <nil>
}

// ExampleVerifyContentDigest checks a body against its Content-Digest.
func ExampleVerifyContentDigest() {
	body := []byte(`{"hello": "world"}`)
	fmt.Println(sig.VerifyContentDigest([]string{sig.ContentDigest(body)}, body))
	err := sig.VerifyContentDigest([]string{sig.ContentDigest(body)}, []byte(`{"hello": "moon"}`))
	fmt.Println(errors.Is(err, sig.ErrDigestMismatch))
	// Output:
	// <nil>
	// true
}

// ExampleParseContentDigest reads the members of a Content-Digest, unknown
// algorithms too.
func ExampleParseContentDigest() {
	vals, err := sig.ParseContentDigest([]string{"sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:, unixsum=:AAAA:"})
	fmt.Println(len(vals), vals[0].Alg, vals[1].Alg, err)
	// Output: 2 sha-256 unixsum <nil>
}

// ExampleDigest writes the RFC 3230 Digest Mastodon sends.
func ExampleDigest() {
	fmt.Println(sig.Digest([]byte(`{"hello": "world"}`)))
	// Output: SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=
}

// ExampleVerifyDigest checks a body against its Digest.
func ExampleVerifyDigest() {
	err := sig.VerifyDigest([]string{"SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="}, []byte(`{"hello": "world"}`))
	fmt.Println(err)
	err = sig.VerifyDigest([]string{"SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE="}, []byte(`{"hello": "moon"}`))
	fmt.Println(errors.Is(err, sig.ErrDigestMismatch))
	// Output:
	// <nil>
	// true
}

// ExampleParseDigest reads the members of a Digest.
func ExampleParseDigest() {
	vals, err := sig.ParseDigest([]string{"SHA-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=, unixsum=30637"})
	fmt.Println(len(vals), vals[0].Alg, len(vals[0].Sum), vals[1].Alg, vals[1].Sum == nil, err)
	// Output: 2 sha-256 32 unixsum true <nil>
}
