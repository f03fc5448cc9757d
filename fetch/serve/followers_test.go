package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync"
	"testing"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/fetch/serve"
	"github.com/fedkit/fedkit/sig/inbox"
)

const (
	bobID   = "https://other.example/users/bob"
	carolID = "https://third.example/users/carol"
	follow1 = "https://other.example/follows/1"
)

// queue records every activity an Outbox queued.
type queue struct {
	mu   sync.Mutex
	sent []queued
	err  error
}

type queued struct {
	act     map[string]any
	inboxes []string
}

func (q *queue) Send(_ context.Context, _ string, activity []byte, inboxes []string) error {
	var m map[string]any
	_ = json.Unmarshal(activity, &m)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent = append(q.sent, queued{m, inboxes})
	return q.err
}

func remoteActors() docs {
	return docs{
		bobID:                                  []byte(`{"id":"` + bobID + `","type":"Person","inbox":"` + bobID + `/inbox","endpoints":{"sharedInbox":"https://other.example/inbox"}}`),
		carolID:                                []byte(`{"id":"` + carolID + `","type":"Person","inbox":"` + carolID + `/inbox"}`),
		"https://other.example/users/noinbox":  []byte(`{"id":"https://other.example/users/noinbox","type":"Person"}`),
		"https://other.example/users/oddinbox": []byte(`{"id":"https://other.example/users/oddinbox","type":"Person","inbox":["x"]}`),
		"https://other.example/users/moved":    []byte(`{"id":"https://other.example/users/elsewhere","type":"Person","inbox":"https://other.example/inbox"}`),
	}
}

// activity is what the inbox hands on for body, signed by its actor.
func activity(t *testing.T, body string) *inbox.Activity {
	t.Helper()
	var h struct{ ID, Type, Actor string }
	var o struct{ Object json.RawMessage }
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatal(err)
	}
	_ = json.Unmarshal([]byte(body), &o)
	a := &inbox.Activity{Body: json.RawMessage(body), ID: h.ID, Type: h.Type, Actor: h.Actor, Trust: inbox.TrustSignature}
	var s string
	if json.Unmarshal(o.Object, &s) == nil {
		a.Object = s
	} else {
		var oo struct{ ID string }
		_ = json.Unmarshal(o.Object, &oo)
		a.Object = oo.ID
	}
	return a
}

func followOf(actor, id, object string) string {
	return `{"id":"` + id + `","type":"Follow","actor":"` + actor + `","object":"` + object + `"}`
}

func TestFollowers(t *testing.T) {
	t.Parallel()
	bobFollows := followOf(bobID, follow1, actorID)
	cases := []struct {
		name        string
		manual      bool
		bodies      []string
		wantErr     error
		wantFollows []string
		wantInboxes []string
		wantAccepts []string // inboxes each Accept went to
	}{
		{"a Follow is recorded and accepted at the follower's inbox", false, []string{bobFollows},
			nil, []string{bobID}, []string{"https://other.example/inbox"}, []string{bobID + "/inbox"}},
		{"a Follow of someone else is passed on only", false, []string{followOf(bobID, follow1, "https://social.example/users/dave")},
			nil, nil, nil, nil},
		{"an actor approving by hand accepts nothing", true, []string{bobFollows}, nil, nil, nil, nil},
		{"a repeated Follow is accepted again, recorded once", false, []string{bobFollows, bobFollows},
			nil, []string{bobID}, []string{"https://other.example/inbox"}, []string{bobID + "/inbox", bobID + "/inbox"}},
		{"a follower without a shared inbox is delivered at its inbox", false, []string{bobFollows, followOf(carolID, "https://third.example/f/9", actorID)},
			nil, []string{bobID, carolID}, []string{"https://other.example/inbox", carolID + "/inbox"}, []string{bobID + "/inbox", carolID + "/inbox"}},
		{"Undo of the embedded Follow, as Mastodon sends it", false, []string{bobFollows, `{"id":"https://other.example/u/1","type":"Undo","actor":"` + bobID + `","object":` + bobFollows + `}`},
			nil, nil, nil, []string{bobID + "/inbox"}},
		{"Undo of an embedded Follow without its id", false, []string{bobFollows, `{"type":"Undo","actor":"` + bobID + `","object":{"type":"Follow","actor":{"id":"` + bobID + `"},"object":"` + actorID + `"}}`},
			nil, nil, nil, []string{bobID + "/inbox"}},
		{"Undo naming the Follow's id", false, []string{bobFollows, `{"type":"Undo","actor":"` + bobID + `","object":"` + follow1 + `"}`},
			nil, nil, nil, []string{bobID + "/inbox"}},
		{"Undo of another Follow keeps the follower", false, []string{bobFollows, `{"type":"Undo","actor":"` + bobID + `","object":"https://other.example/follows/2"}`},
			nil, []string{bobID}, []string{"https://other.example/inbox"}, []string{bobID + "/inbox"}},
		{"Undo of a Like keeps the follower", false, []string{bobFollows, `{"type":"Undo","actor":"` + bobID + `","object":{"type":"Like","actor":"` + bobID + `","object":"` + actorID + `"}}`},
			nil, []string{bobID}, []string{"https://other.example/inbox"}, []string{bobID + "/inbox"}},
		{"someone else's Undo of bob's Follow changes nothing", false, []string{bobFollows, `{"type":"Undo","actor":"` + carolID + `","object":` + bobFollows + `}`},
			nil, []string{bobID}, []string{"https://other.example/inbox"}, []string{bobID + "/inbox"}},
		{"the follower's Delete of itself", false, []string{bobFollows, `{"type":"Delete","actor":"` + bobID + `","object":"` + bobID + `"}`},
			nil, nil, nil, []string{bobID + "/inbox"}},
		{"a follower whose actor has no inbox", false, []string{followOf("https://other.example/users/noinbox", "https://other.example/f/3", actorID)},
			serve.ErrNoInbox, nil, nil, nil},
		{"a follower whose inbox is not a URL", false, []string{followOf("https://other.example/users/oddinbox", "https://other.example/f/4", actorID)},
			serve.ErrNoInbox, nil, nil, nil},
		{"a follower whose document has another id", false, []string{followOf("https://other.example/users/moved", "https://other.example/f/5", actorID)},
			serve.ErrNoInbox, nil, nil, nil},
		{"a follower that cannot be fetched", false, []string{followOf("https://other.example/users/nobody", "https://other.example/f/6", actorID)},
			fetch.ErrNotFound, nil, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pub, _ := edPair(t)
			me := actorAt(t, serve.ActorOpts{ID: actorID, Username: "alice", Key: &serve.ActorKey{Public: pub}, ManuallyApprovesFollowers: tc.manual})
			q := &queue{}
			fs := &serve.Followers{Outbox: &serve.Outbox{Actor: me, Sender: q}, Actors: remoteActors()}
			var passed int
			receive := fs.Receive(func(context.Context, *inbox.Activity) error { passed++; return nil })
			var err error
			for _, b := range tc.bodies {
				if err = receive(context.Background(), activity(t, b)); err != nil {
					break
				}
			}
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("receive: %v; want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && passed != len(tc.bodies) {
				t.Errorf("next saw %d of %d activities", passed, len(tc.bodies))
			}
			for _, id := range []string{bobID, carolID} {
				if got, want := fs.Has(id), contains(tc.wantFollows, id); got != want {
					t.Errorf("Has(%s) = %v", id, got)
				}
			}
			if got := fs.Inboxes(); !reflect.DeepEqual(got, tc.wantInboxes) {
				t.Errorf("Inboxes() = %v; want %v", got, tc.wantInboxes)
			}
			var accepts []string
			for _, s := range q.sent {
				if s.act["type"] != "Accept" || s.act["actor"] != actorID || len(s.inboxes) != 1 {
					t.Errorf("sent %v to %v", s.act, s.inboxes)
					continue
				}
				if obj, _ := s.act["object"].(map[string]any); obj["type"] != "Follow" || obj["object"] != actorID {
					t.Errorf("Accept of %v", s.act["object"])
				}
				accepts = append(accepts, s.inboxes[0])
			}
			if !reflect.DeepEqual(accepts, tc.wantAccepts) {
				t.Errorf("Accepts to %v; want %v", accepts, tc.wantAccepts)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestFollowersErrors(t *testing.T) {
	t.Parallel()
	me := localActor(t)
	down := errors.New("queue down")
	cases := []struct {
		name    string
		fs      *serve.Followers
		wantErr error
	}{
		{"no Outbox", &serve.Followers{Actors: remoteActors()}, serve.ErrIncomplete},
		{"no Actors", &serve.Followers{Outbox: &serve.Outbox{Actor: me, Sender: &queue{}}}, serve.ErrIncomplete},
		{"an Accept that cannot be queued", &serve.Followers{Outbox: &serve.Outbox{Actor: me, Sender: &queue{err: down}}, Actors: remoteActors()}, down},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var called bool
			err := tc.fs.Receive(func(context.Context, *inbox.Activity) error { called = true; return nil })(context.Background(), activity(t, followOf(bobID, follow1, actorID)))
			if !errors.Is(err, tc.wantErr) || called {
				t.Fatalf("receive: %v (next called: %v); want %v", err, called, tc.wantErr)
			}
		})
	}
	// next's error is the inbox's answer.
	fs := &serve.Followers{Outbox: &serve.Outbox{Actor: me, Sender: &queue{}}, Actors: remoteActors()}
	if err := fs.Receive(func(context.Context, *inbox.Activity) error { return down })(context.Background(), activity(t, `{"type":"Like","actor":"`+bobID+`"}`)); !errors.Is(err, down) {
		t.Fatalf("next's error: %v", err)
	}
	if err := fs.Receive(nil)(context.Background(), activity(t, `{"type":"Like","actor":"`+bobID+`"}`)); err != nil {
		t.Fatalf("nil next: %v", err)
	}
}

// The zero Followers (fields set) lists nobody.
func TestFollowersEmpty(t *testing.T) {
	t.Parallel()
	var fs serve.Followers
	if fs.Has(bobID) || fs.Inboxes() != nil {
		t.Fatal("zero Followers has followers")
	}
}
