package fetch

import (
	"os"
	"testing"

	"github.com/fedkit/fedkit/internal/fixture"
	"github.com/fedkit/fedkit/sig"
)

// FuzzParseKeyDocument feeds key and actor documents to the key
// resolver's reader: it must never panic, and whatever it accepts must be
// a parsed key owned by an actor on the key's origin.
func FuzzParseKeyDocument(f *testing.F) {
	if d := fixture.SharedDir(); d != "" {
		if b, err := os.ReadFile(d + "/ldsig/fedify-actor.json"); err == nil {
			f.Add(b, "https://actor.example/users/alice", "https://actor.example/users/alice#main-key")
			f.Add(b, "https://actor.example/users/alice", "https://actor.example/users/alice#ed25519-key")
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, docID, keyID string) {
		id, err := sig.ParseKeyID(keyID)
		if err != nil {
			return
		}
		key, owner, err := parseKeyDocument(raw, docID, id)
		if err != nil {
			return
		}
		if key == nil || key.Public == nil || key.Owner == "" {
			t.Fatalf("accepted %+v without a key or owner", key)
		}
		if !sameOriginIDs(key.Owner, keyID) {
			t.Fatalf("owner %q is not on the key's origin %q", key.Owner, keyID)
		}
		if owner != "" {
			_ = checkKeyOwner(raw, owner, id, key)
		}
	})
}
