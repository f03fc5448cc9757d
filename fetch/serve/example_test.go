package serve_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/fetch/serve"
	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/inbox"
)

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

func ExampleWebFinger() {
	const actor = "https://social.example/users/alice"
	http.Handle(serve.WebFingerPath, serve.WebFinger(func(ctx context.Context, resource string) (*serve.Account, error) {
		if user, ok := serve.AcctUser(resource, "social.example"); (ok && user == "alice") || resource == actor {
			return &serve.Account{Subject: "acct:alice@social.example", Aliases: []string{actor}, Actor: actor}, nil
		}
		return nil, nil // 404
	}))
}

func ExampleAcctUser() {
	fmt.Println(serve.AcctUser("acct:alice@Social.Example", "social.example"))
	// Output: alice true
}

func ExampleHostMeta() {
	http.Handle(serve.HostMetaPath, serve.HostMeta("https://social.example"))
}

func ExampleNodeInfo() {
	users := int64(1)
	ni := serve.NodeInfo("https://social.example", func(context.Context) (*fetch.NodeInfo, error) {
		return &fetch.NodeInfo{Software: fetch.Software{Name: "myserver", Version: "0.1"},
			Usage: fetch.Usage{Users: fetch.UserCounts{Total: &users}}}, nil
	})
	for _, p := range []string{serve.NodeInfoWellKnownPath, serve.NodeInfo21Path, serve.NodeInfo20Path} {
		http.Handle(p, ni)
	}
}

// One URL serves the actor document to ActivityPub clients and the
// profile page to browsers.
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

func ExampleWriteJSON() {
	http.HandleFunc("GET /users/alice/outbox", func(w http.ResponseWriter, r *http.Request) {
		serve.WriteJSON(w, http.StatusOK, map[string]any{
			"@context": serve.ContextActivityStreams, "id": "https://social.example/users/alice/outbox",
			"type": "OrderedCollection", "totalItems": 0, "orderedItems": []any{},
		})
	})
}

func ExampleAccounts() {
	find := serve.Accounts("social.example", map[string]string{"alice": "https://social.example/users/alice"})
	http.Handle(serve.WebFingerPath, serve.WebFinger(find))
	a, _ := find(context.Background(), "acct:alice@social.example")
	fmt.Println(a.Actor)
	// Output: https://social.example/users/alice
}

func ExampleActor_Activity() {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	alice, _ := serve.NewActor(&serve.ActorOpts{ID: "https://social.example/users/alice", Key: &serve.ActorKey{Public: pub}})
	create := alice.Activity("Create", alice.Note("<p>Hello, fediverse</p>"))
	fmt.Println(create.Type, create.Actor, create.To, create.Cc)
	// Output: Create https://social.example/users/alice [https://www.w3.org/ns/activitystreams#Public] [https://social.example/users/alice/followers]
}

func ExampleOutbox() {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	alice, _ := serve.NewActor(&serve.ActorOpts{ID: "https://social.example/users/alice", Key: &serve.ActorKey{Public: pub}})
	var d serve.Sender // a *deliver.Deliverer signing with alice's key
	out := &serve.Outbox{Actor: alice, Sender: d}
	_ = out.Send(context.Background(), alice.Activity("Follow", "https://other.example/users/bob"), "https://other.example/users/bob/inbox")
}

func ExampleRoutes() {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	alice, _ := serve.NewActor(&serve.ActorOpts{ID: "https://social.example/users/alice", Username: "alice", Key: &serve.ActorKey{Public: pub}})
	var in http.Handler = http.NotFoundHandler() // an *inbox.Handler
	mux, err := serve.Routes(in, alice)
	if err != nil {
		panic(err)
	}
	mux.Handle(serve.HostMetaPath, serve.HostMeta("https://social.example"))
	_ = http.ListenAndServe("127.0.0.1:8080", mux)
}

func ExampleFollowers() {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	alice, _ := serve.NewActor(&serve.ActorOpts{ID: "https://social.example/users/alice", Username: "alice", Key: &serve.ActorKey{Public: pub}})
	var (
		d       serve.Sender   // a *deliver.Deliverer signing with alice's key
		fetcher *fetch.Fetcher // the application's, to look followers up
		keys    sig.KeyResolver
	)
	out := &serve.Outbox{Actor: alice, Sender: d}
	followers := &serve.Followers{Outbox: out, Actors: fetcher}
	// Follows of alice are accepted; the application sees every activity.
	in, _ := inbox.New(keys, followers.Receive(func(ctx context.Context, a *inbox.Activity) error {
		return nil
	}), nil)
	_, _ = serve.Routes(in, alice)
	// A post goes to every follower's (shared) inbox.
	_ = out.Send(context.Background(), alice.Activity("Create", alice.Note("<p>Hello</p>")), followers.Inboxes()...)
}

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
