package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/fedkit/fedkit/examples/relay/internal/store"
	"github.com/fedkit/fedkit/sig"
)

func subscribe(t *testing.T, r *testRelay, in *instance, object string) string {
	t.Helper()
	code, id := in.follow(r, object)
	if code != http.StatusAccepted {
		t.Fatalf("%s: Follow = %d; want 202", in.name, code)
	}
	acc := in.waitFor("Accept", is("Accept", id))
	checkRelaySigned(t, r, acc)
	return id
}

func checkRelaySigned(t *testing.T, r *testRelay, d delivery) {
	t.Helper()
	if d.Verified != nil {
		t.Fatalf("%s from the relay does not verify: %v", d.Type, d.Verified)
	}
	if d.KeyID != r.url+"/actor#main-key" {
		t.Fatalf("%s signed by %q; want the relay's key", d.Type, d.KeyID)
	}
}

func TestEndToEnd(t *testing.T) {
	r := startRelay(t, "", "")
	a, b, c := newInstance(t, "a"), newInstance(t, "b"), newInstance(t, "c")
	followA := subscribe(t, r, a, public) // Mastodon style
	subscribe(t, r, b, public)            // Mastodon style
	subscribe(t, r, c, r.url+"/actor")    // LitePub style
	if subs, _ := r.app.store.List(context.Background()); len(subs) != 3 {
		t.Fatalf("subscribers = %+v; want 3", subs)
	}

	t.Run("create relayed", func(t *testing.T) {
		if code := a.create(r, "1"); code != http.StatusAccepted {
			t.Fatalf("Create = %d; want 202", code)
		}
		got := b.waitFor("the Create", is("Create", a.note("1")))
		checkRelaySigned(t, r, got)
		var act map[string]any
		if err := json.Unmarshal(got.Body, &act); err != nil || act["actor"] != a.user {
			t.Fatalf("forwarded Create = %s; want the author's activity as is", got.Body)
		}
		ann := c.waitFor("the Announce", is("Announce", a.note("1")))
		checkRelaySigned(t, r, ann)
		if n := a.count(is("Create", a.note("1"))); n != 0 {
			t.Fatalf("the sender received its own Create %d times", n)
		}
	})

	t.Run("delete after create", func(t *testing.T) {
		// b refuses the Create twice; the Delete must still arrive after it.
		b.mu.Lock()
		b.failNext["Create "+a.note("2")] = 2
		b.mu.Unlock()
		if a.create(r, "2") != http.StatusAccepted || a.delete(r, "2") != http.StatusAccepted {
			t.Fatal("Create or Delete not accepted")
		}
		b.waitFor("the Delete", is("Delete", a.note("2")))
		b.mu.Lock()
		defer b.mu.Unlock()
		ci, di := -1, -1
		for i, d := range b.received {
			switch {
			case d.Type == "Create" && d.ObjectID == a.note("2"):
				ci = i
			case d.Type == "Delete" && d.ObjectID == a.note("2"):
				di = i
			}
		}
		if ci < 0 || di < ci {
			t.Fatalf("order at b: Create at %d, Delete at %d; want Create first", ci, di)
		}
	})

	t.Run("forged signature refused", func(t *testing.T) {
		forger, err := sig.NewSigner(testKey(t, "forger"), a.actor+"#main-key", nil)
		if err != nil {
			t.Fatal(err)
		}
		act := map[string]any{"id": a.note("x") + "/activity", "type": "Create", "actor": a.actor, "to": []string{public},
			"object": map[string]any{"id": a.note("x"), "type": "Note"}}
		if code := a.post(r.url+"/inbox", act, forger); code != http.StatusUnauthorized {
			t.Fatalf("forged signature: %d; want 401", code)
		}
		if code := a.postWith(r.url+"/inbox", act, nil); code != http.StatusUnauthorized {
			t.Fatalf("unsigned: %d; want 401", code)
		}
		// b's valid signature on an activity claiming to be a's.
		if code := b.post(r.url+"/inbox", act, nil); code != http.StatusUnauthorized {
			t.Fatalf("signer is not the actor: %d; want 401", code)
		}
		// A body changed after signing.
		tamper := func(req *http.Request) error {
			if err := a.signer.Sign(req, sig.SchemeRFC9421); err != nil {
				return err
			}
			body := bytes.Replace(mustJSON(act), []byte("Note"), []byte("Page"), 1)
			req.Body, req.ContentLength = readCloser(body), int64(len(body))
			return nil
		}
		if code := a.postWith(r.url+"/inbox", act, tamper); code != http.StatusUnauthorized {
			t.Fatalf("tampered body: %d; want 401", code)
		}
	})

	t.Run("undo unsubscribes", func(t *testing.T) {
		code := a.post(r.url+"/inbox", map[string]any{"id": a.srv.URL + "/undo/1", "type": "Undo", "actor": a.actor,
			"object": map[string]any{"id": followA, "type": "Follow", "actor": a.actor, "object": public}}, nil)
		if code != http.StatusAccepted {
			t.Fatalf("Undo = %d; want 202", code)
		}
		if _, ok, _ := r.app.store.Get(context.Background(), a.actor); ok {
			t.Fatal("a is still subscribed after Undo")
		}
		if b.create(r, "3") != http.StatusAccepted {
			t.Fatal("b's Create refused")
		}
		c.waitFor("b's post", is("Announce", b.note("3")))
		if n := a.count(func(d delivery) bool { return d.ObjectID == b.note("3") }); n != 0 {
			t.Fatalf("a received b's post after unsubscribing")
		}
		// a is no longer a subscriber: its posts are refused.
		if code := a.create(r, "4"); code != http.StatusForbidden {
			t.Fatalf("Create from a former subscriber = %d; want 403", code)
		}
	})
}

func TestRestartKeepsSubscribers(t *testing.T) {
	dir := t.TempDir()
	r := startRelay(t, dir, "")
	a := newInstance(t, "a")
	subscribe(t, r, a, public)
	r.srv.Close()

	r2 := startRelay(t, dir, "")
	sub, ok, err := r2.app.store.Get(context.Background(), a.actor)
	if err != nil || !ok || sub.State != store.StateActive || sub.Inbox != a.srv.URL+"/inbox" {
		t.Fatalf("after restart: %+v, %v, %v; want a's active subscription", sub, ok, err)
	}
}
