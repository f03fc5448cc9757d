package relay

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/examples/relay/internal/store"
	"github.com/fedkit/fedkit/sig"
)

// addActorDoc publishes an actor on peer name's host with the peer's key
// pair under the actor's own key id and the inboxes given ("" leaves one
// out), and returns its id and signer.
func (f *fixture) addActorDoc(name, path, inbox, sharedInbox string) (string, *sig.Signer) {
	f.t.Helper()
	p := f.peers[name]
	id := "https://" + p.host + path
	pem, _ := sig.MarshalPublicKeyPEM(p.key.Public())
	doc := map[string]any{"id": id, "type": "Person",
		"publicKey": map[string]any{"id": id + "#main-key", "owner": id, "publicKeyPem": string(pem)}}
	if inbox != "" {
		doc["inbox"] = inbox
	}
	if sharedInbox != "" {
		doc["endpoints"] = map[string]any{"sharedInbox": sharedInbox}
	}
	f.look.set(id, doc)
	s, err := sig.NewSigner(p.key, id+"#main-key", nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return id, s
}

// inboxHosts counts, per host, the inboxes sends went to.
func inboxHosts(sends []sent) map[string]int {
	n := map[string]int{}
	for _, s := range sends {
		for _, in := range s.Inboxes {
			if u, err := url.Parse(in); err == nil {
				n[u.Host]++
			}
		}
	}
	return n
}

// TestFollowCannotAimAtAnotherServer is the attack review's case: 25 actors
// on a.example publish inboxes on victim.example and follow the relay. Before
// the fix 25 Accepts went to victim.example, and every post 25 times after.
func TestFollowCannotAimAtAnotherServer(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("b", Public)
	for i := range 25 {
		actor, signer := f.addActorDoc("a", fmt.Sprintf("/users/u%d", i), fmt.Sprintf("https://victim.example/inbox/%d", i), "")
		w := f.post(signer, map[string]any{"id": actor + "/follow", "type": "Follow", "actor": actor, "object": Public})
		if w.Code != http.StatusUnprocessableEntity {
			t.Errorf("Follow %d = %d %s; want 422 (the inbox is not on the actor's host)", i, w.Code, w.Body)
		}
	}
	if n := inboxHosts(f.send.take())["victim.example"]; n != 0 {
		t.Fatalf("%d sends to victim.example; want none", n)
	}
	subs, _ := f.store.List(context.Background())
	for _, s := range subs {
		if strings.Contains(s.Inbox, "victim.example") {
			t.Fatalf("stored a subscription delivering to another server: %+v", s)
		}
	}
	if w := f.create("b", "1"); w.Code != http.StatusAccepted {
		t.Fatalf("Create = %d", w.Code)
	}
	if n := inboxHosts(f.send.take())["victim.example"]; n != 0 {
		t.Fatalf("a post went %d times to victim.example; want never", n)
	}
}

func TestInboxMustBeOnTheActorsHost(t *testing.T) {
	tests := []struct {
		name          string
		inbox, shared string
		wantCode      int
		wantInbox     string
	}{
		{name: "shared inbox on the host", inbox: "https://a.example/users/x/inbox", shared: "https://a.example/inbox",
			wantCode: 202, wantInbox: "https://a.example/inbox"},
		{name: "inbox only", inbox: "https://a.example/users/x/inbox", wantCode: 202, wantInbox: "https://a.example/users/x/inbox"},
		{name: "shared inbox elsewhere, inbox on the host", inbox: "https://a.example/users/x/inbox", shared: "https://victim.example/inbox",
			wantCode: 202, wantInbox: "https://a.example/users/x/inbox"},
		{name: "both elsewhere", inbox: "https://victim.example/x", shared: "https://victim.example/inbox", wantCode: 422},
		{name: "subdomain is another server", inbox: "https://victim.a.example/inbox", wantCode: 422},
		{name: "another port is another server", inbox: "https://a.example:8443/inbox", wantCode: 422},
		{name: "explicit default port", inbox: "https://a.example:443/inbox", wantCode: 202, wantInbox: "https://a.example:443/inbox"},
		{name: "host case", inbox: "https://A.Example/inbox", wantCode: 202, wantInbox: "https://A.Example/inbox"},
		{name: "credentials in the URL", inbox: "https://victim.example@a.example/inbox", wantCode: 422},
		{name: "no inbox", wantCode: 422},
		{name: "not http", inbox: "ftp://a.example/inbox", wantCode: 422},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			actor, signer := f.addActorDoc("a", "/users/x", tt.inbox, tt.shared)
			w := f.post(signer, map[string]any{"id": actor + "/follow", "type": "Follow", "actor": actor, "object": Public})
			if w.Code != tt.wantCode {
				t.Fatalf("Follow = %d %s; want %d", w.Code, w.Body, tt.wantCode)
			}
			sends := f.send.take()
			sub, ok, _ := f.store.Get(context.Background(), actor)
			if tt.wantInbox == "" {
				if ok || len(sends) != 0 {
					t.Fatalf("stored %+v (%v), sent %+v; want neither", sub, ok, sends)
				}
				return
			}
			if !ok || sub.Inbox != tt.wantInbox || len(sends) != 1 || !slices.Equal(sends[0].Inboxes, []string{tt.wantInbox}) {
				t.Fatalf("stored %+v (%v), sent %+v; want the Accept to %s", sub, ok, sends, tt.wantInbox)
			}
		})
	}
}

// TestOneSubscriptionPerHost: a Mastodon-style Follow subscribes a whole
// server, so 25 actors of one server following Public are one subscription,
// one Accept, and one delivery of each post.
func TestOneSubscriptionPerHost(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("b", Public)
	codes := map[int]int{}
	for i := range 25 {
		actor, signer := f.addActorDoc("a", fmt.Sprintf("/users/u%d", i), fmt.Sprintf("https://a.example/users/u%d/inbox", i), "")
		codes[f.post(signer, map[string]any{"id": actor + "/follow", "type": "Follow", "actor": actor, "object": Public}).Code]++
	}
	if codes[http.StatusAccepted] != 1 || codes[http.StatusConflict] != 24 {
		t.Errorf("answers %v; want one 202 and 24 409", codes)
	}
	if n := inboxHosts(f.send.take())["a.example"]; n != 1 {
		t.Errorf("%d Accepts to a.example; want 1", n)
	}
	// The same actor following again is the same subscription.
	first := "https://a.example/users/u0"
	if w := f.post(signerOf(t, f, first), map[string]any{"id": first + "/follow2", "type": "Follow", "actor": first, "object": Public}); w.Code != http.StatusAccepted {
		t.Errorf("re-Follow by the subscribed actor = %d; want 202", w.Code)
	}
	f.send.take()
	subs, _ := f.store.List(context.Background())
	onA := 0
	for _, s := range subs {
		if s.Host == "a.example" {
			onA++
		}
	}
	if onA != 1 {
		t.Errorf("%d subscriptions on a.example; want 1", onA)
	}
	f.create("b", "1")
	if n := inboxHosts(f.send.take())["a.example"]; n != 1 {
		t.Fatalf("a post went %d times to a.example; want once", n)
	}
}

func signerOf(t *testing.T, f *fixture, actor string) *sig.Signer {
	t.Helper()
	s, err := sig.NewSigner(f.peers["a"].key, actor+"#main-key", nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestFanoutOneDeliveryPerHost: subscriptions kept from before the checks
// (or a LitePub user's follow beside its server's relay actor) never make
// one post reach a server twice, nor an inbox off the subscriber's host.
func TestFanoutOneDeliveryPerHost(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("a", Public)
	ctx := context.Background()
	for _, s := range []store.Subscriber{
		{Actor: "https://c.example/actor", Inbox: "https://c.example/inbox", Host: "c.example", Style: store.StyleMastodon, State: store.StateActive},
		{Actor: "https://c.example/relay", Inbox: "https://c.example/inbox", Host: "c.example", Style: store.StyleLitePub, State: store.StateActive},
		{Actor: "https://c.example/users/carol", Inbox: "https://c.example/users/carol/inbox", Host: "c.example", Style: store.StyleLitePub, State: store.StateActive},
		{Actor: "https://d.example/actor", Inbox: "https://victim.example/inbox", Host: "d.example", Style: store.StyleMastodon, State: store.StateActive},
		{Actor: "https://e.example/actor", Inbox: "https://e.example/inbox", Host: "", Style: store.StyleMastodon, State: store.StateActive},
	} {
		if err := f.store.Put(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if w := f.create("a", "1"); w.Code != http.StatusAccepted {
		t.Fatalf("Create = %d", w.Code)
	}
	sends := f.send.take()
	hosts := inboxHosts(sends)
	if hosts["c.example"] != 1 || hosts["victim.example"] != 0 || hosts["e.example"] != 1 || hosts["a.example"] != 0 {
		t.Fatalf("deliveries by host %v; want c.example and e.example once, victim.example and the sender never", hosts)
	}
	// c.example's Mastodon-style subscription is the one used: forwarded
	// as it came, which keeps the author's Linked Data signature.
	for _, s := range sends {
		if slices.Contains(s.Inboxes, "https://c.example/inbox") && !strings.Contains(string(s.Body), `"type":"Create"`) {
			t.Fatalf("c.example got %s; want the Create forwarded", s.Body)
		}
	}
}
