package ldsig_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/ldsig"
)

// A sender signs an activity so that its recipients can forward it; an
// inbox that receives it from someone else verifies it.
func ExampleSign() {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	activity := []byte(`{"@context":"https://www.w3.org/ns/activitystreams","id":"https://example.com/users/alice/statuses/1/activity","type":"Create","actor":"https://example.com/users/alice","object":{"id":"https://example.com/users/alice/statuses/1","type":"Note","content":"hello"}}`)
	signed, err := ldsig.Sign(activity, key, &ldsig.SignOpts{Creator: "https://example.com/users/alice#main-key"})
	if err != nil {
		panic(err)
	}

	// The inbox side: keys usually come from fetching the actor.
	v := &ldsig.Verifier{Keys: sig.KeyResolverFunc(func(_ context.Context, id sig.KeyID) (*sig.Key, error) {
		return &sig.Key{Public: &key.PublicKey, Owner: "https://example.com/users/alice"}, nil
	})}
	keyID, owner, err := v.VerifyActivity(context.Background(), signed)
	fmt.Println(keyID, owner, err)
	// Output: https://example.com/users/alice#main-key https://example.com/users/alice <nil>
}

// An inbox handler tells an activity without an LD signature from one
// whose signature fails, and names the context it would not fetch.
func ExampleVerifier_VerifyActivity() {
	v := &ldsig.Verifier{Keys: sig.KeyResolverFunc(func(context.Context, sig.KeyID) (*sig.Key, error) {
		return nil, sig.ErrUnknownKey
	})}
	for _, body := range []string{
		`{"@context":"https://www.w3.org/ns/activitystreams","type":"Follow","actor":"https://example.com/users/alice"}`,
		`{"@context":["https://www.w3.org/ns/activitystreams","https://contexts.example/private"],"type":"Follow","signature":{"type":"RsaSignature2017","creator":"https://example.com/users/alice#main-key","signatureValue":"AAAA"}}`,
	} {
		_, _, err := v.VerifyActivity(context.Background(), []byte(body))
		var uc *ldsig.UnknownContextError
		switch {
		case errors.Is(err, ldsig.ErrNoSignature):
			fmt.Println("no LD signature: refetch the activity or refuse it")
		case errors.As(err, &uc):
			fmt.Println("not shipped, not fetched:", uc.URL)
		default:
			fmt.Println(err)
		}
	}
	// Output:
	// no LD signature: refetch the activity or refuse it
	// not shipped, not fetched: https://contexts.example/private
}

// A Fedify body carries an eddsa-jcs-2022 proof made before its
// RsaSignature2017 signature: verify the proof with the signature
// detached.
func ExampleDetach() {
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	doc := sig.WithDataIntegrityContext(map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams",
		"id":       "https://example.com/users/alice/statuses/1/activity",
		"type":     "Create",
		"actor":    "https://example.com/users/alice",
	})
	doc, _ = sig.CreateProof(doc, edKey, &sig.ProofOpts{VerificationMethod: "https://example.com/users/alice#ed25519-key"})
	body, _ := json.Marshal(doc)
	signed, _ := ldsig.Sign(body, rsaKey, &ldsig.SignOpts{Creator: "https://example.com/users/alice#main-key"})

	var received map[string]any
	_ = json.Unmarshal(signed, &received)
	_, err := sig.VerifyProof(ldsig.Detach(received), edKey.Public().(ed25519.PublicKey))
	fmt.Println("detached:", err)
	_, err = sig.VerifyProof(received, edKey.Public().(ed25519.PublicKey))
	fmt.Println("attached:", err)
	// Output:
	// detached: <nil>
	// attached: sig: bad signature
}

// The canonical N-Quads LD signatures hash. A name no context defines
// (here "Hashtag" would be one: ActivityStreams leaves it to extensions)
// becomes a blank node or is dropped, and so is not signed.
func ExampleCanonicalize() {
	nq, err := ldsig.Canonicalize([]byte(`{"@context":"https://www.w3.org/ns/activitystreams","id":"https://example.com/notes/1","type":"Note","content":"hi","tag":{"type":"Mention","name":"@bob"}}`))
	fmt.Print(nq, err)
	// Output:
	// <https://example.com/notes/1> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <https://www.w3.org/ns/activitystreams#Note> .
	// <https://example.com/notes/1> <https://www.w3.org/ns/activitystreams#content> "hi" .
	// <https://example.com/notes/1> <https://www.w3.org/ns/activitystreams#tag> _:c14n0 .
	// _:c14n0 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <https://www.w3.org/ns/activitystreams#Mention> .
	// _:c14n0 <https://www.w3.org/ns/activitystreams#name> "@bob" .
	// <nil>
}
