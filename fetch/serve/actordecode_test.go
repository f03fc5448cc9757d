package serve_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fedkit/fedkit/fetch/serve"
)

func TestActorUnmarshal(t *testing.T) {
	t.Parallel()
	const key = `{"id":"https://h.example/u/a#main-key","owner":"https://h.example/u/a","publicKeyPem":"PEM"}`
	cases := []struct {
		name        string
		doc         string
		wantContext []any
		wantKeyID   string
		wantErr     bool
	}{
		{"Mastodon: @context array, publicKey object",
			`{"@context":["https://www.w3.org/ns/activitystreams","https://w3id.org/security/v1",{"manuallyApprovesFollowers":"as:manuallyApprovesFollowers"}],"id":"https://h.example/u/a","type":"Person","inbox":"https://h.example/u/a/inbox","publicKey":` + key + `}`,
			[]any{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1", map[string]any{"manuallyApprovesFollowers": "as:manuallyApprovesFollowers"}}, "https://h.example/u/a#main-key", false},
		{"honk: @context a string",
			`{"@context":"https://www.w3.org/ns/activitystreams","id":"https://h.example/u/a","type":"Person","inbox":"https://h.example/u/a/inbox","publicKey":` + key + `}`,
			[]any{"https://www.w3.org/ns/activitystreams"}, "https://h.example/u/a#main-key", false},
		{"@context an object",
			`{"@context":{"@vocab":"https://www.w3.org/ns/activitystreams#"},"id":"https://h.example/u/a","inbox":"https://h.example/u/a/inbox"}`,
			[]any{map[string]any{"@vocab": "https://www.w3.org/ns/activitystreams#"}}, "", false},
		{"publicKey an array: the first kept",
			`{"id":"https://h.example/u/a","inbox":"https://h.example/u/a/inbox","publicKey":[` + key + `,{"id":"https://h.example/u/a#other"}]}`,
			nil, "https://h.example/u/a#main-key", false},
		{"publicKey an empty array", `{"id":"https://h.example/u/a","publicKey":[]}`, nil, "", false},
		{"no @context, publicKey null", `{"id":"https://h.example/u/a","publicKey":null,"@context":null}`, nil, "", false},
		{"publicKey a string", `{"id":"https://h.example/u/a","publicKey":"https://h.example/u/a#main-key"}`, nil, "", true},
		{"@context a number is kept as written", `{"id":"https://h.example/u/a","@context":7}`, []any{7.0}, "", false},
		{"inbox an array", `{"id":"https://h.example/u/a","inbox":["x"]}`, nil, "", true},
		{"not an object", `[]`, nil, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var a serve.Actor
			err := json.Unmarshal([]byte(tc.doc), &a)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Unmarshal: %v; want error %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if a.ID != "https://h.example/u/a" || !reflect.DeepEqual(a.Context, tc.wantContext) || a.KeyID() != tc.wantKeyID {
				t.Errorf("got id %s context %#v key %q", a.ID, a.Context, a.KeyID())
			}
		})
	}
}

// What NewActor builds decodes back to itself.
func TestActorRoundTrip(t *testing.T) {
	t.Parallel()
	pub, _ := edPair(t)
	want := actorAt(t, serve.ActorOpts{ID: actorID, Username: "alice", SharedInbox: "https://social.example/inbox", Key: &serve.ActorKey{Public: pub}, AssertionKeys: []serve.ActorKey{{Public: pub}}})
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var got serve.Actor
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&got, want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", &got, want)
	}
}
