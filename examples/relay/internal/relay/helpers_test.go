package relay

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/examples/relay/internal/store"
	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig"
)

const base = "https://relay.example"

func loadKey(t testing.TB, name string) crypto.Signer {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "keys", name+".pem"))
	if err != nil {
		t.Fatal(err)
	}
	k, err := sig.ParsePrivateKeyPEM(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// fakeLookup serves documents from a map and counts lookups.
type fakeLookup struct {
	mu    sync.Mutex
	docs  map[string][]byte
	calls map[string]int
	gone  map[string]bool // answered 410, as a deleted account's server does
}

func (f *fakeLookup) Lookup(_ context.Context, u string) (*fetch.Document, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[u]++
	if f.gone[u] {
		return nil, &fetch.StatusError{URL: u, StatusCode: http.StatusGone}
	}
	raw, ok := f.docs[u]
	if !ok {
		return nil, fmt.Errorf("404 %s", u)
	}
	var id struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(raw, &id)
	return &fetch.Document{ID: id.ID, Raw: raw}, nil
}

func (f *fakeLookup) set(u string, doc any) {
	b, _ := json.Marshal(doc)
	f.mu.Lock()
	f.docs[u] = b
	f.mu.Unlock()
}

type sent struct {
	KeyID   string
	Body    []byte
	Inboxes []string
	Batch   deliver.Batch
}

type recSender struct {
	mu   sync.Mutex
	sent []sent
}

func (s *recSender) SendBatch(_ context.Context, keyID string, activity []byte, inboxes []string, b deliver.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, sent{keyID, append([]byte(nil), activity...), append([]string(nil), inboxes...), b})
	return nil
}

func (s *recSender) take() []sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sent
	s.sent = nil
	return out
}

// peer is a fake remote server's actor with its key.
type peer struct {
	host, actor string
	key         crypto.Signer
	signer      *sig.Signer
}

type fixture struct {
	t      testing.TB
	r      *Relay
	look   *fakeLookup
	send   *recSender
	store  *store.FileStore
	peers  map[string]*peer
	relayK crypto.Signer
}

func actorDoc(p *peer, pub crypto.PublicKey) map[string]any {
	pem, _ := sig.MarshalPublicKeyPEM(pub)
	return map[string]any{
		"id": p.actor, "type": "Application", "inbox": "https://" + p.host + "/actor/inbox",
		"endpoints": map[string]any{"sharedInbox": "https://" + p.host + "/inbox"},
		"publicKey": map[string]any{"id": p.actor + "#main-key", "owner": p.actor, "publicKeyPem": string(pem)},
	}
}

func newFixture(t testing.TB, mod func(*Config)) *fixture {
	t.Helper()
	f := &fixture{t: t, look: &fakeLookup{docs: map[string][]byte{}, calls: map[string]int{}}, send: &recSender{},
		peers: map[string]*peer{}, relayK: loadKey(t, "relay")}
	var err error
	f.store, err = store.OpenFile(filepath.Join(t.TempDir(), "subs.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		p := &peer{host: name + ".example", actor: "https://" + name + ".example/actor", key: loadKey(t, name)}
		p.signer, _ = sig.NewSigner(p.key, p.actor+"#main-key", nil)
		f.peers[name] = p
		f.look.set(p.actor, actorDoc(p, p.key.Public()))
	}
	cfg := &Config{PublicURL: base, Name: "test relay", Key: f.relayK, Store: f.store, Sender: f.send, Lookup: f.look,
		AdminToken: "admin-token-0123456789"}
	if mod != nil {
		mod(cfg)
	}
	f.r, err = New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// post sends activity to the inbox signed by signer (nil: unsigned).
func (f *fixture) post(signer *sig.Signer, activity map[string]any) *httptest.ResponseRecorder {
	f.t.Helper()
	b, _ := json.Marshal(activity)
	req := httptest.NewRequest(http.MethodPost, base+"/inbox", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/activity+json")
	if signer != nil {
		if err := signer.Sign(req, sig.SchemeCavage); err != nil {
			f.t.Fatal(err)
		}
	}
	w := httptest.NewRecorder()
	f.r.Handler().ServeHTTP(w, req)
	return w
}

func (f *fixture) follow(name, object string) *httptest.ResponseRecorder {
	p := f.peers[name]
	return f.post(p.signer, map[string]any{"id": "https://" + p.host + "/follows/1", "type": "Follow", "actor": p.actor, "object": object})
}

func (f *fixture) subscribe(name, object string) {
	f.t.Helper()
	if w := f.follow(name, object); w.Code != http.StatusAccepted {
		f.t.Fatalf("follow %s: %d %s", name, w.Code, w.Body)
	}
	f.send.take()
}

func (f *fixture) create(name, note string, to ...string) *httptest.ResponseRecorder {
	p := f.peers[name]
	if to == nil {
		to = []string{Public}
	}
	return f.post(p.signer, map[string]any{"id": "https://" + p.host + "/notes/" + note + "/activity", "type": "Create",
		"actor": p.actor, "to": to, "object": map[string]any{"id": "https://" + p.host + "/notes/" + note, "type": "Note"}})
}

func newSigner(k crypto.Signer, keyID string) (*sig.Signer, error) {
	return sig.NewSigner(k, keyID, nil)
}

func subscriberA(p *peer) store.Subscriber {
	return store.Subscriber{Actor: p.actor, Inbox: "https://" + p.host + "/inbox", Host: p.host, Style: store.StyleMastodon,
		FollowID: "https://" + p.host + "/follows/1", State: store.StateActive}
}
