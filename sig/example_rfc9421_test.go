package sig_test

import (
	"bytes"
	"fmt"
	"net/http"
	"time"

	"github.com/fedkit/fedkit/sig"
)

// ExampleSignRFC9421 signs a Directory request with full control over label,
// components and parameters.
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

// ExampleSignRFC9421Response signs a response, covering the request it
// answers with ;req, and verifies it.
func ExampleSignRFC9421Response() {
	key := exampleKey()
	req, _ := http.NewRequest("POST", "https://b.example/inbox", nil)
	resp := &http.Response{StatusCode: 202, Header: http.Header{}, Request: req}
	err := sig.SignRFC9421Response(resp, key, &sig.SignOpts{Components: []string{"@status", "@method;req", "@target-uri;req"}, Created: time.Unix(1785933296, 0)})
	sigs, _ := sig.ParseRFC9421Signatures(resp.Header)
	fmt.Println(err, sig.VerifyRFC9421Response(resp, sigs[0], key.Public(), ""))
	// Output: <nil> <nil>
}

// ExampleVerifyRFC9421 checks one parsed signature against a key.
func ExampleVerifyRFC9421() {
	key := exampleKey()
	req, _ := http.NewRequest("GET", "https://b.example/users/bob", nil)
	_ = sig.SignRFC9421(req, key, &sig.SignOpts{Components: []string{"@method", "@target-uri"}, KeyID: "k", Created: time.Unix(1785933296, 0)})
	sigs, _ := sig.ParseRFC9421Signatures(req.Header)
	fmt.Println(sigs[0].KeyID, sig.VerifyRFC9421(req, sigs[0], key.Public(), ""))
	// Output: k <nil>
}

// ExampleParseRFC9421Signatures reads the signatures of a request, one per
// label.
func ExampleParseRFC9421Signatures() {
	h := http.Header{}
	h.Set("Signature-Input", `sig1=("@method" "@target-uri");created=1618884473;keyid="k";tag="t"`)
	h.Set("Signature", `sig1=:YQ==:`)
	sigs, err := sig.ParseRFC9421Signatures(h)
	fmt.Println(sigs[0].Label, sigs[0].Components(), sigs[0].Tag, sigs[0].Created.Unix(), err)
	// Output: sig1 ["@method" "@target-uri"] t 1618884473 <nil>
}

// ExampleRFC9421SignatureBase shows what a signature covers, for debugging
// an interoperability failure.
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
