package serve_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/fetch/serve"
	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/inbox"
)

// ExampleFollowers accepts Follows, and posts to every follower's inbox.
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
