package serve_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/fetch/serve"
)

func localActor(t *testing.T) *serve.Actor {
	t.Helper()
	pub, _ := edPair(t)
	a, err := serve.NewActor(&serve.ActorOpts{ID: actorID, Username: "alice", Key: &serve.ActorKey{Public: pub}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestActivity(t *testing.T) {
	t.Parallel()
	a := localActor(t)
	note := a.Note("<p>hi</p>")
	follow := json.RawMessage(`{"id":"https://other.example/follows/1","type":"Follow","actor":"https://other.example/users/bob","object":"` + actorID + `"}`)
	cases := []struct {
		name   string
		act    *serve.Activity
		want   map[string]any // members compared after a JSON round trip
		absent []string
	}{
		{"Follow of an id", a.Activity("Follow", "https://other.example/users/bob"),
			map[string]any{"type": "Follow", "object": "https://other.example/users/bob"}, []string{"to", "cc"}},
		{"Accept of a received Follow", a.Activity("Accept", follow),
			map[string]any{"type": "Accept", "object": map[string]any{"id": "https://other.example/follows/1", "type": "Follow",
				"actor": "https://other.example/users/bob", "object": actorID}}, []string{"to", "cc"}},
		{"Create of a public Note copies its addressing", a.Activity("Create", note),
			map[string]any{"type": "Create", "to": []any{serve.Public}, "cc": []any{actorID + "/followers"},
				"object": map[string]any{"id": note.ID, "type": "Note", "attributedTo": actorID, "content": "<p>hi</p>",
					"to": []any{serve.Public}, "cc": []any{actorID + "/followers"}}}, nil},
		{"Accept of a Follow given as []byte", a.Activity("Accept", []byte(follow)),
			map[string]any{"type": "Accept", "object": map[string]any{"id": "https://other.example/follows/1", "type": "Follow",
				"actor": "https://other.example/users/bob", "object": actorID}}, []string{"to", "cc"}},
		{"nil *Object", a.Activity("Create", (*serve.Object)(nil)), map[string]any{"type": "Create"}, []string{"to", "cc", "object"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.act)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got["@context"] != serve.ContextActivityStreams || got["actor"] != actorID {
				t.Errorf("@context %v, actor %v", got["@context"], got["actor"])
			}
			if id, _ := got["id"].(string); !strings.HasPrefix(id, actorID+"/activities/") || len(id) < len(actorID+"/activities/")+20 {
				t.Errorf("id %q: want a fresh id under the actor", id)
			}
			for k, v := range tc.want {
				if !reflect.DeepEqual(got[k], v) {
					t.Errorf("%s = %#v; want %#v", k, got[k], v)
				}
			}
			for _, k := range tc.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s present: %s", k, b)
				}
			}
		})
	}
}

func TestActivityIDsAreFresh(t *testing.T) {
	t.Parallel()
	a := localActor(t)
	if x, y := a.Activity("Follow", "x"), a.Activity("Follow", "x"); x.ID == y.ID {
		t.Errorf("two activities share id %s", x.ID)
	}
	if x, y := a.Note("a"), a.Note("a"); x.ID == y.ID || !strings.HasPrefix(x.ID, actorID+"/notes/") {
		t.Errorf("note ids %s, %s", x.ID, y.ID)
	}
}

func TestNoteWithoutFollowers(t *testing.T) {
	t.Parallel()
	a := localActor(t)
	a.Followers = ""
	if n := a.Note("x"); n.Cc != nil || !reflect.DeepEqual(n.To, []string{serve.Public}) {
		t.Errorf("to %v cc %v", n.To, n.Cc)
	}
}

// sent records what an Outbox queued.
type sent struct {
	keyID   string
	body    []byte
	inboxes []string
	err     error
}

func (s *sent) Send(_ context.Context, keyID string, activity []byte, inboxes []string) error {
	s.keyID, s.body, s.inboxes = keyID, activity, inboxes
	return s.err
}

func TestOutboxSend(t *testing.T) {
	t.Parallel()
	a := localActor(t)
	failing := errors.New("queue down")
	cases := []struct {
		name    string
		box     serve.Outbox
		act     *serve.Activity
		wantErr error
	}{
		{"queued with the actor's key", serve.Outbox{Actor: a, Sender: &sent{}}, a.Activity("Follow", "https://other.example/users/bob"), nil},
		{"sender's error returned", serve.Outbox{Actor: a, Sender: &sent{err: failing}}, a.Activity("Follow", "x"), failing},
		{"no sender", serve.Outbox{Actor: a}, a.Activity("Follow", "x"), serve.ErrIncomplete},
		{"no actor", serve.Outbox{Sender: &sent{}}, a.Activity("Follow", "x"), serve.ErrIncomplete},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.box.Send(context.Background(), tc.act, "https://other.example/inbox")
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Send: %v; want %v", err, tc.wantErr)
			}
			s, ok := tc.box.Sender.(*sent)
			if tc.wantErr == serve.ErrIncomplete || !ok {
				return
			}
			var got serve.Activity
			if err := json.Unmarshal(s.body, &got); err != nil || got.ID != tc.act.ID {
				t.Errorf("body %s (%v)", s.body, err)
			}
			if s.keyID != a.KeyID() || !reflect.DeepEqual(s.inboxes, []string{"https://other.example/inbox"}) {
				t.Errorf("key %s inboxes %v", s.keyID, s.inboxes)
			}
		})
	}
}

func TestOutboxSendUnencodable(t *testing.T) {
	t.Parallel()
	a := localActor(t)
	box := serve.Outbox{Actor: a, Sender: &sent{}}
	if err := box.Send(context.Background(), a.Activity("Create", make(chan int))); err == nil {
		t.Fatal("an object JSON cannot encode was sent")
	}
}
