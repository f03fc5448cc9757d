package serve_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"

	"github.com/fedkit/fedkit/fetch/serve"
)

// ExampleActor_Activity builds a public Create of a note.
func ExampleActor_Activity() {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	alice, _ := serve.NewActor(&serve.ActorOpts{ID: "https://social.example/users/alice", Key: &serve.ActorKey{Public: pub}})
	create := alice.Activity("Create", alice.Note("<p>Hello, fediverse</p>"))
	fmt.Println(create.Type, create.Actor, create.To, create.Cc)
	// Output: Create https://social.example/users/alice [https://www.w3.org/ns/activitystreams#Public] [https://social.example/users/alice/followers]
}

// ExampleOutbox queues an activity for delivery to one inbox.
func ExampleOutbox() {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	alice, _ := serve.NewActor(&serve.ActorOpts{ID: "https://social.example/users/alice", Key: &serve.ActorKey{Public: pub}})
	var d serve.Sender // a *deliver.Deliverer signing with alice's key
	out := &serve.Outbox{Actor: alice, Sender: d}
	_ = out.Send(context.Background(), alice.Activity("Follow", "https://other.example/users/bob"), "https://other.example/users/bob/inbox")
}

// ExampleActor_Note writes a public note of the actor's, addressed as
// Mastodon addresses a public post, ready to wrap in a Create.
func ExampleActor_Note() {
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	alice, _ := serve.NewActor(&serve.ActorOpts{ID: "https://social.example/users/alice", Key: &serve.ActorKey{Public: pub}})
	note := alice.Note("<p>Hello, fediverse</p>")
	fmt.Println(note.Type, note.AttributedTo, note.Content)
	// Output: Note https://social.example/users/alice <p>Hello, fediverse</p>
}
