// Command minimal is a small fediverse server built on fedkit: one actor
// with a key, an inbox that accepts verified activities (and Follows),
// Create(Note) delivered to its followers, and remote actors looked up by
// handle. The handles given as arguments are followed at start; lines
// from standard input are posted as notes.
//
//	go run ./examples/minimal -host social.example -user alice bob@other.example
package main

import (
	"bufio"
	"context"
	"crypto"
	"flag"
	"log"
	"net/http"
	"os"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/fetch/serve"
	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/inbox"
)

type server struct {
	actor     *serve.Actor
	fetch     *fetch.Fetcher
	out       *deliver.Deliverer
	outbox    *serve.Outbox
	followers *serve.Followers         // accepts every Follow
	onNote    func(actor, text string) // a Note received
}

// newServer serves user's actor, inbox and WebFinger at scheme://host.
func newServer(scheme, host, user string, key crypto.Signer, c *client.Client, fc *fetch.Config) (*server, http.Handler, error) {
	actor, err := serve.NewActor(&serve.ActorOpts{ID: scheme + "://" + host + "/users/" + user, Username: user, Key: &serve.ActorKey{Public: key.Public()}})
	if err != nil {
		return nil, nil, err
	}
	s := &server{actor: actor, onNote: func(actor, text string) { log.Printf("%s: %s", actor, text) }}
	if fc.Signer, err = sig.NewSigner(key, actor.KeyID(), nil); err != nil {
		return nil, nil, err
	}
	if s.fetch, err = fetch.New(c, fc); err != nil {
		return nil, nil, err
	}
	if s.out, err = deliver.New(&deliver.MemoryQueue{}, deliver.SingleKey{KeyID: actor.KeyID(), Signer: key}, c, nil); err != nil {
		return nil, nil, err
	}
	s.outbox = &serve.Outbox{Actor: actor, Sender: s.out}
	s.followers = &serve.Followers{Outbox: s.outbox, Actors: s.fetch}
	keys, _ := fetch.NewKeyResolver(s.fetch, nil) // fails only on a nil Fetcher
	in, err := inbox.New(keys, s.followers.Receive(s.receive), &inbox.Config{Verifier: sig.VerifierConfig{URLScheme: scheme}})
	if err != nil {
		return nil, nil, err
	}
	h, err := serve.Routes(in, actor)
	return s, h, err
}

// receive gets every verified activity, after Followers has seen it.
func (s *server) receive(_ context.Context, a *inbox.Activity) error {
	var c struct{ Object struct{ Content string } }
	if a.Type == "Create" && a.Decode(&c) == nil {
		s.onNote(a.Actor, c.Object.Content)
	}
	return nil
}

// follow looks a handle up (WebFinger, then the actor) and follows it.
func (s *server) follow(ctx context.Context, handle string) error {
	actor, _, err := fetch.ResolveAs[serve.Actor](ctx, s.fetch, handle)
	if err != nil {
		return err
	}
	return s.outbox.Send(ctx, s.actor.Activity("Follow", actor.ID), actor.Inbox)
}

// post delivers a public Create(Note) to every follower.
func (s *server) post(ctx context.Context, text string) error {
	return s.outbox.Send(ctx, s.actor.Activity("Create", s.actor.Note(text)), s.followers.Inboxes()...)
}

func main() {
	host := flag.String("host", "localhost:8080", "the public host; served as https behind a proxy")
	user := flag.String("user", "alice", "the actor's user name")
	listen := flag.String("listen", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	key, err := sig.LoadOrGenerateKey(*user+".pem", sig.KeyRSA2048)
	check(err)
	c, _ := client.New(nil) // the default Config always validates
	s, h, err := newServer("https", *host, *user, key, c, &fetch.Config{})
	check(err)
	ctx := context.Background()
	go func() { check(s.out.Run(ctx)) }()
	go func() { check(http.ListenAndServe(*listen, h)) }()
	for _, handle := range flag.Args() {
		check(s.follow(ctx, handle))
	}
	for in := bufio.NewScanner(os.Stdin); in.Scan(); {
		check(s.post(ctx, in.Text()))
	}
	select {}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
