package serve_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/fedkit/fedkit/fetch/serve"
	"github.com/fedkit/fedkit/sig/inbox"
)

// ExampleNewActor builds a local actor with its key, inbox and collections.
func ExampleNewActor() {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	a, err := serve.NewActor(&serve.ActorOpts{
		ID: "https://social.example/users/alice", Username: "alice",
		Key: &serve.ActorKey{Public: pub},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(a.Type, a.Inbox, a.KeyID())
	// Output: Person https://social.example/users/alice/inbox https://social.example/users/alice#main-key
}

// ExampleActor_ServeHTTP serves, at one URL, the actor document to
// ActivityPub clients and the profile page to browsers.
func ExampleActor_ServeHTTP() {
	var actor *serve.Actor
	http.HandleFunc("GET /users/alice", func(w http.ResponseWriter, r *http.Request) {
		if inbox.WantsActivityPub(r) {
			actor.ServeHTTP(w, r)
			return
		}
		fmt.Fprint(w, "<h1>Alice</h1>") // the profile page
	})
}

// ExampleActor_UnmarshalJSON reads a remote actor, in any of the shapes
// servers write.
func ExampleActor_UnmarshalJSON() {
	// A remote actor, as honk writes it: @context a string.
	doc := `{"@context":"https://www.w3.org/ns/activitystreams","id":"https://honk.example/u/bob","type":"Person",
		"inbox":"https://honk.example/u/bob/inbox","publicKey":{"id":"https://honk.example/u/bob#key","owner":"https://honk.example/u/bob","publicKeyPem":"..."}}`
	var bob serve.Actor
	if err := json.Unmarshal([]byte(doc), &bob); err != nil {
		panic(err)
	}
	fmt.Println(bob.Inbox, bob.KeyID())
	// Output: https://honk.example/u/bob/inbox https://honk.example/u/bob#key
}

// ExampleWriteJSON answers with an ActivityStreams document.
func ExampleWriteJSON() {
	http.HandleFunc("GET /users/alice/outbox", func(w http.ResponseWriter, r *http.Request) {
		serve.WriteJSON(w, http.StatusOK, map[string]any{
			"@context": serve.ContextActivityStreams, "id": "https://social.example/users/alice/outbox",
			"type": "OrderedCollection", "totalItems": 0, "orderedItems": []any{},
		})
	})
}
