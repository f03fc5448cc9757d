package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	"github.com/fedkit/fedkit/examples/relay/internal/store"
	"github.com/fedkit/fedkit/sig"
)

// The shapes below are what Mastodon, Misskey and Pleroma/Akkoma send a
// relay, written from their public behaviour: Mastodon and Misskey follow
// Public from an instance actor and then send each public post signed by its
// author, with a Linked Data signature the relay must pass on untouched;
// a LitePub server follows the relay actor from its own relay actor, which
// announces public posts to its followers.

// addActor publishes another actor on peer name's host, with the peer's key
// pair under the actor's own key id, and returns its id and signer.
func (f *fixture) addActor(name, path string) (string, *sig.Signer) {
	f.t.Helper()
	p := f.peers[name]
	id := "https://" + p.host + path
	pem, _ := sig.MarshalPublicKeyPEM(p.key.Public())
	f.look.set(id, map[string]any{"id": id, "type": "Person", "inbox": id + "/inbox",
		"publicKey": map[string]any{"id": id + "#main-key", "owner": id, "publicKeyPem": string(pem)}})
	s, err := sig.NewSigner(p.key, id+"#main-key", nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return id, s
}

func (f *fixture) postRaw(signer *sig.Signer, body []byte) *http.Response {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/inbox", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/activity+json")
	if err := signer.Sign(req, sig.SchemeCavage); err != nil {
		f.t.Fatal(err)
	}
	w := httptest.NewRecorder()
	f.r.Handler().ServeHTTP(w, req)
	return w.Result()
}

func TestMastodonRelayFollowAndAccept(t *testing.T) {
	f := newFixture(t, nil)
	a := f.peers["a"]
	// Mastodon's Follow of a relay: instance actor, a bare UUID id, Public.
	follow := `{"@context":"https://www.w3.org/ns/activitystreams","id":"https://a.example/8d1f7a4e-2c0b-4f53-9a57-31c6a2a1f0d2",` +
		`"type":"Follow","actor":"https://a.example/actor","object":"https://www.w3.org/ns/activitystreams#Public"}`
	if resp := f.postRaw(a.signer, []byte(follow)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("Follow = %d", resp.StatusCode)
	}
	sends := f.send.take()
	if len(sends) != 1 {
		t.Fatalf("%d sends; want the Accept only (Mastodon needs no follow-back)", len(sends))
	}
	// Mastodon finds the relay by the Accept's object id (its Follow's id).
	var acc struct {
		Type, Actor string
		Object      struct{ ID, Type, Actor, Object string }
	}
	if err := json.Unmarshal(sends[0].Body, &acc); err != nil {
		t.Fatal(err)
	}
	if acc.Type != "Accept" || acc.Actor != base+"/actor" || acc.Object.ID != "https://a.example/8d1f7a4e-2c0b-4f53-9a57-31c6a2a1f0d2" ||
		acc.Object.Type != "Follow" || acc.Object.Actor != a.actor || acc.Object.Object != Public {
		t.Fatalf("Accept = %s", sends[0].Body)
	}
	if !slices.Equal(sends[0].Inboxes, []string{"https://a.example/inbox"}) {
		t.Fatalf("Accept sent to %v; want the shared inbox", sends[0].Inboxes)
	}
}

func TestLitePubRelayFollowAndAccept(t *testing.T) {
	f := newFixture(t, nil)
	// Pleroma and Akkoma follow from their relay actor, at /relay.
	rel, signer := f.addActor("c", "/relay")
	follow := `{"@context":["https://www.w3.org/ns/activitystreams","https://c.example/schemas/litepub-0.1.jsonld",{"@language":"und"}],` +
		`"id":"https://c.example/activities/0b7f5c2e","type":"Follow","actor":"https://c.example/relay","object":"` + base + `/actor",` +
		`"to":["` + base + `/actor"],"cc":[],"state":"pending"}`
	if resp := f.postRaw(signer, []byte(follow)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("Follow = %d", resp.StatusCode)
	}
	sub, ok, _ := f.store.Get(context.Background(), rel)
	if !ok || sub.Style != store.StyleLitePub || sub.Inbox != rel+"/inbox" {
		t.Fatalf("stored %+v, %v; want a LitePub subscription at the actor's inbox (no shared inbox published)", sub, ok)
	}
	sends := f.send.take()
	if len(sends) != 2 {
		t.Fatalf("%d sends; want the Accept and the follow-back", len(sends))
	}
	// LitePub checks the Accept comes from the followed actor and names its Follow.
	var acc struct {
		Type, Actor string
		Object      struct{ ID, Actor, Object string }
	}
	_ = json.Unmarshal(sends[0].Body, &acc)
	if acc.Type != "Accept" || acc.Actor != base+"/actor" || acc.Object.ID != "https://c.example/activities/0b7f5c2e" || acc.Object.Object != base+"/actor" {
		t.Fatalf("Accept = %s", sends[0].Body)
	}
	var back struct{ ID, Type, Actor, Object string }
	_ = json.Unmarshal(sends[1].Body, &back)
	if back.Type != "Follow" || back.Actor != base+"/actor" || back.Object != rel || back.ID != f.r.followBack(sub)["id"] {
		t.Fatalf("follow-back = %s", sends[1].Body)
	}
	// Removed by the operator: rejected, and unfollowed.
	req := httptest.NewRequest(http.MethodPost, base+"/admin/subscribers/remove?token=admin-token-0123456789&actor="+url.QueryEscape(rel), nil)
	f.r.Handler().ServeHTTP(httptest.NewRecorder(), req)
	var types []string
	for _, s := range f.send.take() {
		var a struct{ Type string }
		_ = json.Unmarshal(s.Body, &a)
		types = append(types, a.Type)
	}
	if !slices.Equal(types, []string{"Reject", "Undo"}) {
		t.Fatalf("sent %v on removal; want Reject and Undo", types)
	}
}

// mastodonCreate is a public post as Mastodon sends it to a relay: signed by
// its author, addressed to Public and the followers, with an LD signature.
func mastodonCreate(author, note string) []byte {
	return []byte(`{"@context":["https://www.w3.org/ns/activitystreams",{"ostatus":"http://ostatus.org#","sensitive":"as:sensitive"}],` +
		`"id":"` + note + `/activity","type":"Create","actor":"` + author + `","published":"2026-11-29T20:00:00Z",` +
		`"to":["https://www.w3.org/ns/activitystreams#Public"],"cc":["` + author + `/followers"],` +
		`"object":{"id":"` + note + `","type":"Note","attributedTo":"` + author + `","content":"<p>hi</p>",` +
		`"to":["https://www.w3.org/ns/activitystreams#Public"],"cc":["` + author + `/followers"]},` +
		`"signature":{"type":"RsaSignature2017","creator":"` + author + `#main-key","created":"2026-11-29T20:00:00Z","signatureValue":"c2ln"}}`)
}

func TestPostsFromAuthorsOfSubscribedServers(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("a", Public)        // Mastodon
	f.subscribe("b", Public)        // Mastodon
	f.subscribe("c", base+"/actor") // LitePub
	alice, aliceSigner := f.addActor("a", "/users/alice")
	body := mastodonCreate(alice, "https://a.example/users/alice/statuses/1")

	if resp := f.postRaw(aliceSigner, body); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("Mastodon user's Create = %d; want 202 (her server is subscribed)", resp.StatusCode)
	}
	sends := f.send.take()
	if len(sends) != 2 {
		t.Fatalf("%d sends; want forward and Announce", len(sends))
	}
	if !bytes.Equal(sends[0].Body, body) || !slices.Equal(sends[0].Inboxes, []string{"https://b.example/inbox"}) {
		t.Errorf("forward = %v %s; want the body byte for byte (its LD signature) to b only", sends[0].Inboxes, sends[0].Body)
	}
	if !slices.Equal(sends[1].Inboxes, []string{"https://c.example/inbox"}) {
		t.Errorf("Announce to %v; want c", sends[1].Inboxes)
	}

	// The same Create again (a retry, a replay) is not relayed again; a
	// relay process that has not seen it (one without a shared seen-set)
	// announces it under the same id, which receivers deduplicate.
	f.postRaw(aliceSigner, body)
	if again := f.send.take(); len(again) != 0 {
		t.Errorf("the same Create relayed again: %d sends", len(again))
	}
	other, err := New(&f.r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	other.cfg.Seen = NewMemorySeen(nil)
	f.r, other = other, f.r
	f.postRaw(aliceSigner, body)
	f.r = other
	again := f.send.take()
	if len(again) != 2 || announceIDOf(again[1].Body) != announceIDOf(sends[1].Body) || announceIDOf(sends[1].Body) == "" {
		t.Errorf("Announce ids %q and %q; want one id for one activity", announceIDOf(sends[1].Body), announceIDOf(again[1].Body))
	}

	// A user of a server that is not subscribed is refused.
	stranger, strangerSigner := f.addActor("a", "/users/bob")
	_, _ = f.store.Delete(context.Background(), f.peers["a"].actor)
	if resp := f.postRaw(strangerSigner, mastodonCreate(stranger, "https://a.example/users/bob/statuses/1")); resp.StatusCode != http.StatusForbidden {
		t.Errorf("Create from an unsubscribed server = %d; want 403", resp.StatusCode)
	}
}

func announceIDOf(b []byte) string {
	var a struct{ ID string }
	_ = json.Unmarshal(b, &a)
	return a.ID
}

func TestLitePubRelayAnnounce(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("a", Public)
	rel, signer := f.addActor("c", "/relay")
	if w := f.post(signer, map[string]any{"id": "https://c.example/activities/f1", "type": "Follow", "actor": rel, "object": base + "/actor"}); w.Code != http.StatusAccepted {
		t.Fatalf("LitePub Follow = %d", w.Code)
	}
	f.send.take()
	// A LitePub relay actor's Announce: to its followers only, object by id.
	ann := map[string]any{"@context": "https://www.w3.org/ns/activitystreams", "id": "https://c.example/activities/a1", "type": "Announce",
		"actor": rel, "to": []string{rel + "/followers"}, "cc": []string{}, "object": "https://c.example/objects/n1"}
	if w := f.post(signer, ann); w.Code != http.StatusAccepted {
		t.Fatalf("Announce = %d", w.Code)
	}
	s := f.send.take()
	if len(s) != 1 || !slices.Equal(s[0].Inboxes, []string{"https://a.example/inbox"}) || s[0].Batch.OrderingKey != "https://c.example/objects/n1" {
		t.Fatalf("sends = %+v; want the Announce forwarded to the Mastodon subscriber", s)
	}
	// Followers-only posts of anyone else stay unrelayed.
	u, us := f.addActor("c", "/users/carol")
	f.post(us, map[string]any{"id": "https://c.example/activities/a2", "type": "Announce", "actor": u,
		"to": []string{u + "/followers"}, "object": "https://c.example/objects/n2"})
	if s := f.send.take(); len(s) != 0 {
		t.Fatalf("a user's followers-only Announce was relayed: %+v", s)
	}
}

func TestUndoFollowShapes(t *testing.T) {
	rel := base + "/actor"
	tests := []struct {
		name   string
		object string // what the peer followed
		undo   func(actor, followID string) map[string]any
		want   bool // unsubscribed
	}{
		{name: "mastodon", object: Public, want: true, undo: func(actor, id string) map[string]any {
			return map[string]any{"id": id + "/undo", "type": "Undo", "actor": actor,
				"object": map[string]any{"id": id, "type": "Follow", "actor": actor, "object": Public}}
		}},
		{name: "litepub", object: rel, want: true, undo: func(actor, id string) map[string]any {
			return map[string]any{"id": "https://a.example/activities/u", "type": "Undo", "actor": actor, "to": []string{rel},
				"object": map[string]any{"id": id, "type": "Follow", "actor": actor, "object": rel, "state": "accept", "to": []string{rel}}}
		}},
		{name: "misskey", object: Public, want: true, undo: func(actor, id string) map[string]any {
			return map[string]any{"id": "https://a.example/abc", "type": "Undo", "actor": actor,
				"object": map[string]any{"id": "https://a.example/activities/follow-relay/other", "type": "Follow", "actor": actor, "object": Public}}
		}},
		{name: "by id", object: Public, want: true, undo: func(actor, id string) map[string]any {
			return map[string]any{"id": "https://a.example/u", "type": "Undo", "actor": actor, "object": id}
		}},
		{name: "follow of someone else", object: Public, undo: func(actor, _ string) map[string]any {
			return map[string]any{"id": "https://a.example/u", "type": "Undo", "actor": actor,
				"object": map[string]any{"id": "https://a.example/f9", "type": "Follow", "actor": actor, "object": "https://x.example/users/y"}}
		}},
		{name: "follow by someone else", object: Public, undo: func(actor, id string) map[string]any {
			return map[string]any{"id": "https://a.example/u", "type": "Undo", "actor": actor,
				"object": map[string]any{"id": "https://a.example/f9", "type": "Follow", "actor": "https://a.example/users/z", "object": Public}}
		}},
		{name: "undo of a like", object: Public, undo: func(actor, _ string) map[string]any {
			return map[string]any{"id": "https://a.example/u", "type": "Undo", "actor": actor,
				"object": map[string]any{"id": "https://a.example/l", "type": "Like", "actor": actor, "object": Public}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			a := f.peers["a"]
			f.subscribe("a", tt.object)
			if w := f.post(a.signer, tt.undo(a.actor, "https://a.example/follows/1")); w.Code != http.StatusAccepted {
				t.Fatalf("Undo = %d", w.Code)
			}
			_, still, _ := f.store.Get(context.Background(), a.actor)
			if still == tt.want {
				t.Fatalf("subscribed after Undo: %v; want %v", still, !tt.want)
			}
			// A LitePub subscriber that leaves is unfollowed, under the
			// follow-back's own id, so its relay actor stops announcing.
			sends := f.send.take()
			if tt.object != rel || !tt.want {
				if len(sends) != 0 {
					t.Fatalf("sends = %+v; want none", sends)
				}
				return
			}
			var undo struct {
				Type, Actor string
				Object      struct{ ID, Type, Actor, Object string }
			}
			if len(sends) != 1 || json.Unmarshal(sends[0].Body, &undo) != nil {
				t.Fatalf("sends = %+v; want the Undo of the follow-back", sends)
			}
			wantID := f.r.followBack(store.Subscriber{Actor: a.actor})["id"]
			if undo.Type != "Undo" || undo.Actor != base+"/actor" || undo.Object.Type != "Follow" || undo.Object.ID != wantID ||
				undo.Object.Object != a.actor || !slices.Equal(sends[0].Inboxes, []string{"https://a.example/inbox"}) {
				t.Fatalf("Undo = %s to %v; want the follow-back %s undone", sends[0].Body, sends[0].Inboxes, wantID)
			}
		})
	}
}

// TestActiveSubscribersCountsServers: participating_instance_count counts
// servers, so a second actor of a subscribed server adds nothing.
func TestActiveSubscribersCountsServers(t *testing.T) {
	f := newFixture(t, nil)
	f.subscribe("a", Public)
	f.subscribe("b", Public)
	user, signer := f.addActor("a", "/users/alice")
	if w := f.post(signer, map[string]any{"id": "https://a.example/f2", "type": "Follow", "actor": user, "object": base + "/actor"}); w.Code != http.StatusAccepted {
		t.Fatalf("Follow = %d", w.Code)
	}
	if n, err := f.r.ActiveSubscribers(context.Background()); err != nil || n != 2 {
		t.Fatalf("ActiveSubscribers = %d, %v; want 2 servers", n, err)
	}
}
