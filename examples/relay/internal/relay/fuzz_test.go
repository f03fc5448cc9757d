package relay

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzHandle feeds arbitrary bodies to the inbox logic past the signature
// check, as from a subscribed, verified sender: it must not panic, must
// answer a sane status, and must only ever send as the relay, with the
// object as the ordering key.
func FuzzHandle(f *testing.F) {
	for _, s := range []string{
		`{"type":"Create","actor":"https://a.example/actor","to":"https://www.w3.org/ns/activitystreams#Public","object":{"id":"https://a.example/n/1"}}`,
		`{"type":["Announce"],"actor":{"id":"https://a.example/actor"},"cc":["as:Public"],"object":"https://x.example/n"}`,
		`{"type":"Undo","actor":"https://a.example/actor","object":{"type":"Follow","actor":"https://a.example/actor"}}`,
		`{"type":"Follow","actor":"https://a.example/actor","object":"https://relay.example/actor"}`,
		`{"type":"Delete","actor":"https://a.example/actor","object":"https://a.example/actor"}`,
		`{"type":"Move","actor":"https://a.example/actor","object":7}`,
		`{"id":"https://a.example/users/alice/statuses/1/activity","type":"Create","actor":"https://a.example/users/alice","to":["https://www.w3.org/ns/activitystreams#Public"],"object":{"id":"https://a.example/users/alice/statuses/1"},"signature":{"type":"RsaSignature2017"}}`,
		`{"type":"Undo","actor":"https://a.example/actor","object":"https://a.example/follows/1"}`,
	} {
		f.Add([]byte(s))
	}
	fx := newFixture(f, nil)
	fx.subscribe("b", Public)
	fx.subscribe("c", base+"/actor")
	a := fx.peers["a"]
	f.Fuzz(func(t *testing.T, body []byte) {
		var act activity
		if json.Unmarshal(body, &act) != nil {
			return
		}
		if u, err := url.Parse(act.actorID()); err != nil || u.Host != a.host {
			return // the inbox refuses these before handle: a.host's actors are subscribed
		}
		ctx := context.Background()
		_ = fx.store.Put(ctx, subscriberA(a))
		code, _ := fx.r.handle(ctx, &act, body, a.host)
		if code < 200 || code >= 600 || code == http.StatusInternalServerError {
			t.Fatalf("status %d", code)
		}
		for _, s := range fx.send.take() {
			if s.KeyID != base+"/actor#main-key" {
				t.Fatalf("sent with key %s", s.KeyID)
			}
			if s.Batch.Tag == TagRelay && s.Batch.OrderingKey == "" {
				t.Fatal("relayed without an ordering key")
			}
			for _, in := range s.Inboxes {
				if s.Batch.Tag == TagRelay && strings.HasPrefix(in, "https://a.example/") {
					t.Fatal("relayed back to the sender")
				}
			}
		}
	})
}
