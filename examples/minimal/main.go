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
	"crypto/rand"
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"os"
	"sync"

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
	followers sync.Map                 // actor → its inbox
	onNote    func(actor, text string) // a Note received
}

// newServer serves user's actor, inbox and WebFinger at scheme://host.
func newServer(scheme, host, user string, key crypto.Signer, c *client.Client, fc *fetch.Config) (*server, http.Handler, error) {
	id := scheme + "://" + host + "/users/" + user
	actor, err := serve.NewActor(&serve.ActorOpts{ID: id, Username: user, Key: &serve.ActorKey{Public: key.Public()}})
	if err != nil {
		return nil, nil, err
	}
	s := &server{actor: actor, onNote: func(actor, text string) { log.Printf("%s: %s", actor, text) }}
	if fc.Signer, err = sig.NewSigner(key, s.actor.KeyID(), nil); err != nil {
		return nil, nil, err
	}
	if s.fetch, err = fetch.New(c, fc); err != nil {
		return nil, nil, err
	}
	keys, _ := fetch.NewKeyResolver(s.fetch, nil) // fails only on a nil Fetcher
	in, err := inbox.New(keys, s.receive, &inbox.Config{Verifier: sig.VerifierConfig{URLScheme: scheme}})
	if err != nil {
		return nil, nil, err
	}
	if s.out, err = deliver.New(&deliver.MemoryQueue{}, deliver.SingleKey{KeyID: s.actor.KeyID(), Signer: key}, c, nil); err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /users/"+user, s.actor)
	mux.Handle("POST /users/"+user+"/inbox", in)
	mux.Handle(serve.WebFingerPath, serve.WebFinger(serve.Accounts(host, map[string]string{user: id})))
	return s, mux, nil
}

// receive gets every verified activity: a Follow is recorded and accepted.
func (s *server) receive(ctx context.Context, a *inbox.Activity) error {
	switch a.Type {
	case "Follow":
		actor, _, err := fetch.LookupAs[serve.Actor](ctx, s.fetch, a.Actor)
		if err != nil {
			return err
		}
		s.followers.Store(a.Actor, actor.Inbox)
		return s.send(ctx, "Accept", a.Body, actor.Inbox)
	case "Create":
		var c struct{ Object struct{ Content string } }
		if a.Decode(&c) == nil {
			s.onNote(a.Actor, c.Object.Content)
		}
	}
	return nil
}

func (s *server) send(ctx context.Context, typ string, object any, inboxes ...string) error {
	act, _ := json.Marshal(map[string]any{"@context": serve.ContextActivityStreams, "id": s.actor.ID + "/objects/" + rand.Text(),
		"type": typ, "actor": s.actor.ID, "object": object})
	return s.out.Send(ctx, s.actor.KeyID(), act, inboxes)
}

// follow looks a handle up (WebFinger, then the actor) and follows it.
func (s *server) follow(ctx context.Context, handle string) error {
	r, err := s.fetch.Resolve(ctx, handle)
	if err != nil {
		return err
	}
	actor, _, err := fetch.LookupAs[serve.Actor](ctx, s.fetch, r.Actor)
	if err != nil {
		return err
	}
	return s.send(ctx, "Follow", actor.ID, actor.Inbox)
}

// post delivers a public Create(Note) to every follower.
func (s *server) post(ctx context.Context, text string) error {
	var inboxes []string
	s.followers.Range(func(_, in any) bool { inboxes = append(inboxes, in.(string)); return true })
	return s.send(ctx, "Create", map[string]any{"id": s.actor.ID + "/objects/" + rand.Text(), "type": "Note", "attributedTo": s.actor.ID,
		"content": text, "to": "https://www.w3.org/ns/activitystreams#Public"}, inboxes...)
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
