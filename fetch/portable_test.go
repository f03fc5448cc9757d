package fetch_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

// portableDoc returns an FEP-ef61 object under did, signed by key.
func portableDoc(t *testing.T, did string, key ed25519.PrivateKey, vmDID string, extra map[string]any) []byte {
	t.Helper()
	doc := map[string]any{
		"@context":     "https://www.w3.org/ns/activitystreams",
		"id":           "ap://" + did + "/objects/1",
		"type":         "Note",
		"attributedTo": "ap://" + did + "/actor",
		"content":      "portable",
	}
	for k, v := range extra {
		doc[k] = v
	}
	doc = sig.WithDataIntegrityContext(doc)
	mb := strings.TrimPrefix(vmDID, "did:key:")
	signed, err := sig.CreateProof(doc, key, &sig.ProofOpts{VerificationMethod: vmDID + "#" + mb})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(signed)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func didKey(t *testing.T) (string, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := sig.FormatMultikey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return "did:key:" + mb, priv
}

func TestLookupPortable(t *testing.T) {
	t.Parallel()
	did, key := didKey(t)
	otherDID, otherKey := didKey(t)
	gw := newSite(t, "gateway.test")
	empty := newSite(t, "empty.test")
	good := portableDoc(t, did, key, did, nil)
	var tampered map[string]any
	_ = json.Unmarshal(good, &tampered)
	tampered["content"] = "changed"
	tampered["id"] = "ap://" + did + "/objects/2"
	tamperedB, _ := json.Marshal(tampered)
	unsigned, _ := json.Marshal(map[string]any{"id": "ap://" + did + "/objects/3", "type": "Note"})

	serve := func(path string, body []byte) {
		gw.serve("/.well-known/apgateway/"+did+path, 200, "application/activity+json", string(body))
	}
	serve("/objects/1", good)
	serve("/objects/2", tamperedB)
	serve("/objects/3", unsigned)
	serve("/objects/4", portableDoc(t, did, otherKey, otherDID, map[string]any{"id": "ap://" + did + "/objects/4"}))
	serve("/objects/5", portableDoc(t, did, key, did, map[string]any{"id": "ap://" + did + "/objects/5", "attributedTo": "ap://" + otherDID + "/actor"}))
	serve("/objects/6", portableDoc(t, did, key, did, map[string]any{"id": "ap://" + did + "/objects/other"}))
	serve("/objects/7", portableDoc(t, did, key, did, map[string]any{"id": "ap://" + did + "/objects/7", "attributedTo": "https://mastodon.test/users/alice"}))

	f := newFetcher(t, &fetch.Config{Gateways: []string{empty.base, gw.base}})
	tests := []struct {
		name string
		url  string
		err  error
	}{
		{"valid proof trusted", "ap://" + did + "/objects/1", nil},
		{"percent-encoded authority", "ap://" + strings.ReplaceAll(did, ":", "%3A") + "/objects/1", nil},
		{"gateway URL looked up directly", gw.url("/.well-known/apgateway/" + did + "/objects/1"), nil},
		{"tampered content", "ap://" + did + "/objects/2", fetch.ErrProof},
		{"no proof", "ap://" + did + "/objects/3", fetch.ErrProof},
		{"signed by another DID", "ap://" + did + "/objects/4", fetch.ErrProof},
		{"author under another DID", "ap://" + did + "/objects/5", fetch.ErrAuthorOrigin},
		{"gateway serves another id", "ap://" + did + "/objects/6", fetch.ErrIDMismatch},
		{"https author of a portable object", "ap://" + did + "/objects/7", fetch.ErrAuthorOrigin},
		{"not found on any gateway", "ap://" + did + "/objects/404", fetch.ErrNotFound},
		{"did:web not supported", "ap://did:web:example.test/objects/1", fetch.ErrUnsupported},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := f.Lookup(context.Background(), tc.url)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Lookup = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Lookup: %v", err)
			}
			if d.ID != "ap://"+did+"/objects/1" || !strings.HasPrefix(d.Proof, did+"#") {
				t.Fatalf("ID %q, Proof %q", d.ID, d.Proof)
			}
		})
	}
	t.Run("no gateways configured", func(t *testing.T) {
		f := newFetcher(t, nil)
		if _, err := f.Lookup(context.Background(), "ap://"+did+"/objects/1"); !errors.Is(err, fetch.ErrUnsupported) {
			t.Fatalf("err = %v", err)
		}
	})
}
