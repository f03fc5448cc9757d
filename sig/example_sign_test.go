package sig_test

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/fedkit/fedkit/sig"
)

// ExampleNewSigner signs a delivery as Mastodon does, with a Digest over the
// body.
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

// ExampleSigner_Sign signs a GET under RFC 9421 with a fixed clock and
// nonce.
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

// ExampleSigner_SignRFC9421 signs with the Signer's key and clock under
// chosen components, as the Directory asks.
func ExampleSigner_SignRFC9421() {
	s, _ := sig.NewSigner(exampleKey(), "https://relay.example/actor#main-key", &sig.SignerConfig{
		Now: func() time.Time { return time.Unix(1785933296, 400) },
	})
	req, _ := http.NewRequest("POST", "https://directory.example/v1/relays/heartbeat", nil)
	_ = s.SignRFC9421(req, &sig.SignOpts{Label: "directory", Components: []string{"@method", "@target-uri"}, Tag: "activity-relay-directory-v1"})
	fmt.Println(req.Header.Get("Signature-Input"))
	// Output: directory=("@method" "@target-uri");keyid="https://relay.example/actor#main-key";tag="activity-relay-directory-v1";created=1785933296
}

// ExampleRandomNonce makes a nonce of the Directory's form.
func ExampleRandomNonce() {
	n, err := sig.RandomNonce()
	fmt.Println(len(n), err)
	// Output: 32 <nil>
}
