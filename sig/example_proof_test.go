package sig_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/fedkit/fedkit/sig"
)

// ExampleWithDataIntegrityContext adds the Data Integrity context a proof
// needs.
func ExampleWithDataIntegrityContext() {
	doc := sig.WithDataIntegrityContext(map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams",
		"type":     "Note",
	})
	fmt.Println(doc["@context"])
	// Output: [https://w3id.org/security/data-integrity/v2 https://www.w3.org/ns/activitystreams]
}

// ExampleCreateProof signs an activity with an eddsa-jcs-2022 proof and
// verifies it.
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

// ExampleParseProof reads a document's proof without verifying it.
func ExampleParseProof() {
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signed, _ := sig.CreateProof(map[string]any{"type": "Note"}, priv, &sig.ProofOpts{VerificationMethod: "https://a.example/actor#ed"})
	p, err := sig.ParseProof(signed)
	fmt.Println(p.VerificationMethod, p.ProofPurpose, err)
	// Output: https://a.example/actor#ed assertionMethod <nil>
}

// ExampleVerifyProof verifies a proof, and fails once the document changes.
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
