package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

// strictLookup serves documents as the Fetcher hands them out: only a
// document whose id is the URL asked for (package fetch refuses others).
type strictLookup map[string][]byte

func (l strictLookup) Lookup(_ context.Context, u string) (*fetch.Document, error) {
	raw, ok := l[u]
	if !ok {
		return nil, fmt.Errorf("404 %s", u)
	}
	var id struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &id) != nil || id.ID != u {
		return nil, fmt.Errorf("%s: id is not the URL", u)
	}
	return &fetch.Document{ID: id.ID, Raw: raw}, nil
}

// FuzzKeyDocument feeds the relay's key resolution (fetch.KeyResolver, as
// the relay wires it) hostile documents: the
// key id's document (an actor with publicKey as an object or an array, or a
// stand-alone key document as GoToSocial serves) and the actor that owns
// it. Whatever they hold, resolution must not panic, and a key it returns
// must be a parsed public key owned by the actor the documents were served
// for, never by a party a document merely names.
func FuzzKeyDocument(f *testing.F) {
	const actor = "https://a.example/users/alice"
	f.Fuzz(func(t *testing.T, keyDoc, actorDoc []byte, standalone bool) {
		keyID := actor + "#main-key"
		look := strictLookup{actor: actorDoc}
		if standalone {
			keyID = actor + "/main-key"
			look[keyID] = keyDoc
		}
		id, err := sig.ParseKeyID(keyID)
		if err != nil {
			t.Fatal(err)
		}
		r, err := fetch.NewKeyResolver(look, nil)
		if err != nil {
			t.Fatal(err)
		}
		k, err := r.ResolveKey(context.Background(), id)
		if err != nil {
			return
		}
		if k == nil || k.Public == nil {
			t.Fatalf("no error and no key: %+v", k)
		}
		if k.Owner != actor {
			t.Fatalf("key owned by %q; want %q, whose documents these are", k.Owner, actor)
		}
	})
}
