package inbox_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedkit/fedkit/internal/fixture"
	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/inbox"
)

const inboxURL = "https://local.example/inbox"

// peer is a remote actor with a key.
type peer struct {
	actor  string
	keyID  string
	key    ed25519.PrivateKey
	signer *sig.Signer
}

func newPeer(t testing.TB, actor string) *peer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p := &peer{actor: actor, keyID: actor + "#main-key", key: priv}
	if p.signer, err = sig.NewSigner(priv, p.keyID, nil); err != nil {
		t.Fatal(err)
	}
	return p
}

// keyring is a sig.KeyResolver (and KeyRefetcher) over a map, standing in
// for fetch.KeyResolver.
type keyring struct {
	mu        sync.Mutex
	keys      map[string]*sig.Key
	fresh     map[string]*sig.Key // what a refetch finds
	errs      map[string]error
	refetches int
}

func newKeyring(peers ...*peer) *keyring {
	k := &keyring{keys: map[string]*sig.Key{}, fresh: map[string]*sig.Key{}, errs: map[string]error{}}
	for _, p := range peers {
		k.add(p.keyID, p.key.Public(), p.actor)
	}
	return k
}

func (k *keyring) add(id string, pub crypto.PublicKey, owner string) {
	k.mu.Lock()
	k.keys[id] = &sig.Key{Public: pub, Owner: owner}
	k.mu.Unlock()
}

func (k *keyring) ResolveKey(_ context.Context, id sig.KeyID) (*sig.Key, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.errs[id.String()]; err != nil {
		return nil, err
	}
	if key, ok := k.keys[id.String()]; ok {
		return key, nil
	}
	return nil, sig.ErrUnknownKey
}

func (k *keyring) RefetchKey(_ context.Context, id sig.KeyID) (*sig.Key, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.refetches++
	if key, ok := k.fresh[id.String()]; ok {
		k.keys[id.String()] = key
		return key, nil
	}
	return nil, errors.New("nothing new")
}

// plainKeyring hides RefetchKey.
type plainKeyring struct{ k *keyring }

func (p plainKeyring) ResolveKey(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
	return p.k.ResolveKey(ctx, id)
}

func post(t testing.TB, signer *sig.Signer, body string) *http.Request {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, inboxURL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/activity+json")
	if signer != nil {
		if err := signer.Sign(req, sig.SchemeCavage); err != nil {
			t.Fatal(err)
		}
	}
	return req
}

func create(actor, id string) string {
	return fmt.Sprintf(`{"@context":"https://www.w3.org/ns/activitystreams","id":%q,"type":"Create","actor":%q,"object":{"id":%q,"type":"Note","attributedTo":%q,"content":"hi"}}`,
		id, actor, id+"/note", actor)
}

// recv records what the application received.
type recv struct {
	mu  sync.Mutex
	got []*inbox.Activity
	err error
}

func (r *recv) receive(_ context.Context, a *inbox.Activity) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, a)
	return r.err
}

func (r *recv) last() *inbox.Activity {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.got) == 0 {
		return nil
	}
	return r.got[len(r.got)-1]
}

// fakeLD is an LDVerifier reporting a fixed result.
type fakeLD struct {
	owner string
	keyID string
	err   error
	calls int
}

func (f *fakeLD) VerifyActivity(_ context.Context, body []byte) (sig.KeyID, string, error) {
	f.calls++
	if f.err != nil {
		return sig.KeyID{}, "", f.err
	}
	id, _ := sig.ParseKeyID(f.keyID)
	return id, f.owner, nil
}

// fakeObjects is a Refetcher serving fixed documents.
type fakeObjects struct {
	docs  map[string]string
	calls int
}

func (f *fakeObjects) Refetch(_ context.Context, id string) ([]byte, error) {
	f.calls++
	d, ok := f.docs[id]
	if !ok {
		return nil, errors.New("404")
	}
	return []byte(d), nil
}

func TestInbox(t *testing.T) {
	t.Parallel()
	alice := newPeer(t, "https://a.example/users/alice")
	relay := newPeer(t, "https://relay.example/actor")
	mallory := newPeer(t, "https://m.example/users/mallory")
	const actID = "https://a.example/users/alice/statuses/1/activity"
	forwarded := create(alice.actor, actID)
	refetchedCopy := strings.Replace(forwarded, `"hi"`, `"as served"`, 1)
	big := `{"type":"Create","actor":"` + alice.actor + `","pad":"` + strings.Repeat("x", 2000) + `"}`
	tests := []struct {
		name    string
		req     func(t *testing.T) *http.Request
		cfg     func(c *inbox.Config)
		status  int
		dropped bool // 202 without reaching the application
		trust   inbox.Trust
		wantLD  int // LD verifier calls
		wantRef int // object refetches
		body    string
	}{
		{name: "signed by the actor", status: 202, trust: inbox.TrustSignature,
			req: func(t *testing.T) *http.Request { return post(t, alice.signer, create(alice.actor, actID)) }},
		{name: "signed by the actor, RFC 9421", status: 202, trust: inbox.TrustSignature,
			req: func(t *testing.T) *http.Request {
				r := httptest.NewRequest(http.MethodPost, inboxURL, strings.NewReader(create(alice.actor, actID)))
				if err := alice.signer.Sign(r, sig.SchemeRFC9421); err != nil {
					t.Fatal(err)
				}
				return r
			}},
		{name: "actor as an object", status: 202, trust: inbox.TrustSignature,
			req: func(t *testing.T) *http.Request {
				return post(t, alice.signer, `{"type":"Like","actor":{"id":"`+alice.actor+`","type":"Person"},"object":"https://x.example/1"}`)
			}},
		{name: "body over the bound", status: 413,
			req: func(t *testing.T) *http.Request { return post(t, alice.signer, big) }},
		{name: "body over the bound, length undeclared", status: 413,
			req: func(t *testing.T) *http.Request {
				r := post(t, alice.signer, big)
				r.ContentLength = -1
				return r
			}},
		{name: "not JSON", status: 400, req: func(t *testing.T) *http.Request { return post(t, alice.signer, "hello") }},
		{name: "no actor", status: 400, req: func(t *testing.T) *http.Request { return post(t, alice.signer, `{"type":"Create"}`) }},
		{name: "two actors", status: 400, req: func(t *testing.T) *http.Request {
			return post(t, alice.signer, `{"type":"Create","actor":["`+alice.actor+`","`+relay.actor+`"]}`)
		}},
		{name: "unsigned", status: 401, body: "no signature", req: func(t *testing.T) *http.Request { return post(t, nil, create(alice.actor, actID)) }},
		{name: "malformed signature", status: 400, req: func(t *testing.T) *http.Request {
			r := post(t, nil, create(alice.actor, actID))
			r.Header.Set("Signature", `keyId="x",,,`)
			return r
		}},
		{name: "body changed after signing", status: 401, req: func(t *testing.T) *http.Request {
			r := post(t, alice.signer, create(alice.actor, actID))
			r.Body = ioNop(strings.Replace(create(alice.actor, actID), "hi", "ho", 1))
			return r
		}},
		{name: "unknown key", status: 401, req: func(t *testing.T) *http.Request {
			return post(t, newPeer(t, "https://u.example/x").signer, create(alice.actor, actID))
		}},
		{name: "signed by someone else", status: 202, dropped: true,
			req: func(t *testing.T) *http.Request { return post(t, mallory.signer, create(alice.actor, actID)) }},
		{name: "forwarded with the actor's LD signature", status: 202, trust: inbox.TrustLDSignature, wantLD: 1,
			cfg: func(c *inbox.Config) { c.LD = &fakeLD{owner: alice.actor, keyID: alice.keyID} },
			req: func(t *testing.T) *http.Request {
				return post(t, relay.signer, strings.TrimSuffix(forwarded, "}")+`,"signature":{"type":"RsaSignature2017"}}`)
			}},
		{name: "LD signature by someone else", status: 202, dropped: true, wantLD: 1,
			cfg: func(c *inbox.Config) { c.LD = &fakeLD{owner: mallory.actor, keyID: mallory.keyID} },
			req: func(t *testing.T) *http.Request {
				return post(t, relay.signer, strings.TrimSuffix(forwarded, "}")+`,"signature":{"type":"RsaSignature2017"}}`)
			}},
		{name: "LD verifier not consulted without a signature", status: 202, dropped: true, wantLD: 0,
			cfg: func(c *inbox.Config) { c.LD = &fakeLD{owner: alice.actor, keyID: alice.keyID} },
			req: func(t *testing.T) *http.Request { return post(t, relay.signer, forwarded) }},
		{name: "LD verifier not consulted when the signer is the actor", status: 202, trust: inbox.TrustSignature,
			cfg: func(c *inbox.Config) { c.LD = &fakeLD{err: errors.New("must not be called")} },
			req: func(t *testing.T) *http.Request {
				return post(t, alice.signer, strings.TrimSuffix(forwarded, "}")+`,"signature":{"type":"RsaSignature2017"}}`)
			}},
		{name: "forwarded, refetched from its id on the actor's origin", status: 202, trust: inbox.TrustRefetch, wantRef: 1,
			cfg: func(c *inbox.Config) { c.Objects = &fakeObjects{docs: map[string]string{actID: refetchedCopy}} },
			req: func(t *testing.T) *http.Request { return post(t, relay.signer, forwarded) }},
		{name: "refetched copy names another actor", status: 202, dropped: true, wantRef: 1,
			cfg: func(c *inbox.Config) {
				c.Objects = &fakeObjects{docs: map[string]string{actID: create(mallory.actor, actID)}}
			},
			req: func(t *testing.T) *http.Request { return post(t, relay.signer, forwarded) }},
		{name: "id on another origin than the actor is not refetched", status: 202, dropped: true, wantRef: 0,
			cfg: func(c *inbox.Config) {
				c.Objects = &fakeObjects{docs: map[string]string{"https://m.example/1": create(alice.actor, "https://m.example/1")}}
			},
			req: func(t *testing.T) *http.Request {
				return post(t, relay.signer, create(alice.actor, "https://m.example/1"))
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			keys := newKeyring(alice, relay, mallory)
			cfg := &inbox.Config{MaxBodyBytes: 1024}
			if tc.cfg != nil {
				tc.cfg(cfg)
			}
			rc := &recv{}
			h, err := inbox.New(keys, rc.receive, cfg)
			if err != nil {
				t.Fatal(err)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, tc.req(t))
			if w.Code != tc.status {
				t.Fatalf("status %d %q; want %d", w.Code, w.Body, tc.status)
			}
			if tc.body != "" && strings.TrimSpace(w.Body.String()) != tc.body {
				t.Errorf("body %q; want %q", w.Body, tc.body)
			}
			if ld, ok := cfg.LD.(*fakeLD); ok && ld.calls != tc.wantLD {
				t.Errorf("%d LD verifications; want %d", ld.calls, tc.wantLD)
			}
			if o, ok := cfg.Objects.(*fakeObjects); ok && o.calls != tc.wantRef {
				t.Errorf("%d refetches; want %d", o.calls, tc.wantRef)
			}
			a := rc.last()
			if tc.status != 202 || tc.dropped {
				if a != nil {
					t.Fatalf("refused, yet the application received %+v", a)
				}
				return
			}
			if a == nil || a.Trust != tc.trust || a.Actor != alice.actor || a.Signature == nil {
				t.Fatalf("received %+v; want trust %v for %s", a, tc.trust, alice.actor)
			}
			if tc.trust == inbox.TrustRefetch && !strings.Contains(string(a.Body), "as served") {
				t.Errorf("TrustRefetch body is what was posted, not the origin's copy: %s", a.Body)
			}
		})
	}
}

func ioNop(s string) *nopBody { return &nopBody{strings.NewReader(s)} }

type nopBody struct{ *strings.Reader }

func (*nopBody) Close() error { return nil }

func TestInboxRefusalReasons(t *testing.T) {
	t.Parallel()
	alice := newPeer(t, "https://a.example/users/alice")
	mallory := newPeer(t, "https://m.example/users/mallory")
	h, _ := inbox.New(newKeyring(alice, mallory), (&recv{}).receive, nil)
	for _, tc := range []struct {
		name string
		req  *http.Request
		want inbox.Reason
	}{
		{"unsigned", post(t, nil, create(alice.actor, "https://a.example/1")), inbox.ReasonNoSignature},
		{"not an activity", post(t, alice.signer, "[]"), inbox.ReasonNotActivity},
		{"someone else's", post(t, mallory.signer, create(alice.actor, "https://a.example/1")), inbox.ReasonSignerNotActor},
	} {
		_, err := h.Accept(tc.req)
		var re *inbox.RefusalError
		if !errors.As(err, &re) || re.Reason != tc.want || !errors.Is(err, inbox.ErrRefused) {
			t.Errorf("%s: err = %v; want reason %v", tc.name, err, tc.want)
		}
	}
}

// A Data Integrity proof by the actor's Ed25519 key establishes a
// forwarded activity.
func TestInboxProof(t *testing.T) {
	t.Parallel()
	alice := newPeer(t, "https://a.example/users/alice")
	relay := newPeer(t, "https://relay.example/actor")
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	var doc map[string]any
	_ = json.Unmarshal([]byte(create(alice.actor, "https://a.example/users/alice/1")), &doc)
	doc = sig.WithDataIntegrityContext(doc)
	signed, err := sig.CreateProof(doc, edKey, &sig.ProofOpts{VerificationMethod: alice.actor + "#ed25519-key"})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(signed)
	tampered := bytes.Replace(body, []byte(`"hi"`), []byte(`"ho"`), 1)
	for _, tc := range []struct {
		name  string
		body  []byte
		owner string
		cfg   inbox.Config
		trust inbox.Trust // 0: dropped
	}{
		{"proof by the actor's key", body, alice.actor, inbox.Config{}, inbox.TrustProof},
		{"tampered", tampered, alice.actor, inbox.Config{}, 0},
		{"proof key owned by someone else", body, relay.actor, inbox.Config{}, 0},
		{"proofs disabled", body, alice.actor, inbox.Config{DisableProofs: true}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := newKeyring(alice, relay)
			keys.add(alice.actor+"#ed25519-key", edKey.Public(), tc.owner)
			rc := &recv{}
			h, _ := inbox.New(keys, rc.receive, &tc.cfg)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, post(t, relay.signer, string(tc.body)))
			if w.Code != 202 {
				t.Fatalf("status %d %q; want 202", w.Code, w.Body)
			}
			a := rc.last()
			if tc.trust == 0 {
				if a != nil {
					t.Fatalf("dropped activity reached the application: %+v", a)
				}
				return
			}
			if a == nil || a.Trust != tc.trust || a.VouchedBy.String() != alice.actor+"#ed25519-key" {
				t.Fatalf("received %+v", a)
			}
		})
	}
}

// The body Fedify 2.3.8 sent (../shared/fixtures/ldsig), relayed by
// another server: its eddsa-jcs-2022 proof verifies with the RsaSignature2017
// signature detached, since Fedify made the proof first.
func TestInboxFedifyProofWithSignatureDetached(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(fixture.SharedPath(t, "ldsig/fedify-create.rsasignature2017.json"))
	if err != nil {
		t.Fatal(err)
	}
	actorDoc, err := os.ReadFile(fixture.SharedPath(t, "ldsig/fedify-actor.json"))
	if err != nil {
		t.Fatal(err)
	}
	var actor struct {
		ID              string `json:"id"`
		AssertionMethod []struct {
			ID                 string `json:"id"`
			PublicKeyMultibase string `json:"publicKeyMultibase"`
		} `json:"assertionMethod"`
	}
	if err := json.Unmarshal(actorDoc, &actor); err != nil {
		t.Fatal(err)
	}
	pub, err := sig.ParseMultikey(actor.AssertionMethod[0].PublicKeyMultibase)
	if err != nil {
		t.Fatal(err)
	}
	relay := newPeer(t, "https://relay.example/actor")
	keys := newKeyring(relay)
	keys.add(actor.AssertionMethod[0].ID, pub, actor.ID)
	rc := &recv{}
	h, _ := inbox.New(keys, rc.receive, &inbox.Config{MaxBodyBytes: 1 << 20})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, post(t, relay.signer, string(body)))
	if w.Code != 202 {
		t.Fatalf("status %d %q", w.Code, w.Body)
	}
	if a := rc.last(); a.Trust != inbox.TrustProof || a.Actor != actor.ID {
		t.Fatalf("received %+v", a)
	}
}

func TestInboxGoneActorDeletesItself(t *testing.T) {
	t.Parallel()
	bob := newPeer(t, "https://b.example/users/bob")
	keys := newKeyring()
	keys.errs[bob.keyID] = fmt.Errorf("fetch: key: %w", sig.ErrGone)
	rc := &recv{}
	h, _ := inbox.New(keys, rc.receive, nil)
	del := `{"id":"` + bob.actor + `#delete","type":"Delete","actor":"` + bob.actor + `","object":"` + bob.actor + `"}`
	for _, tc := range []struct {
		name   string
		body   string
		status int
	}{
		{"Delete of itself", del, 202},
		{"anything else", create(bob.actor, bob.actor+"/1"), 401},
		{"Delete of another actor", strings.Replace(del, `"object":"`+bob.actor, `"object":"https://b.example/users/carol`, 1), 401},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, post(t, bob.signer, tc.body))
		if w.Code != tc.status {
			t.Errorf("%s: status %d %q; want %d", tc.name, w.Code, w.Body, tc.status)
		}
	}
	if a := rc.last(); a == nil || a.Trust != inbox.TrustGone || a.Signature != nil || a.Type != "Delete" {
		t.Fatalf("received %+v", a)
	}
	// A Delete of an actor on another origin than the gone key's is not
	// vouched for by that 410.
	keys.errs["https://evil.example/k#main-key"] = fmt.Errorf("%w", sig.ErrGone)
	evil := newPeer(t, "https://evil.example/k")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, post(t, evil.signer, del))
	if w.Code != 401 {
		t.Fatalf("cross-origin gone key: status %d", w.Code)
	}
}

// A sender that rotated its key: the signature fails with the cached key,
// the key is refetched once and the activity verifies.
func TestInboxKeyRotation(t *testing.T) {
	t.Parallel()
	alice := newPeer(t, "https://a.example/users/alice")
	rotated := newPeer(t, alice.actor)
	for _, tc := range []struct {
		name      string
		resolver  func(k *keyring) sig.KeyResolver
		cfg       inbox.Config
		status    int
		refetches int
	}{
		{"refetched", func(k *keyring) sig.KeyResolver { return k }, inbox.Config{}, 202, 1},
		{"refetch disabled", func(k *keyring) sig.KeyResolver { return k }, inbox.Config{DisableKeyRefetch: true}, 401, 0},
		{"resolver without RefetchKey", func(k *keyring) sig.KeyResolver { return plainKeyring{k} }, inbox.Config{}, 401, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := newKeyring(alice) // the old key, cached
			keys.fresh[alice.keyID] = &sig.Key{Public: rotated.key.Public(), Owner: alice.actor}
			h, _ := inbox.New(tc.resolver(keys), (&recv{}).receive, &tc.cfg)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, post(t, rotated.signer, create(alice.actor, alice.actor+"/1")))
			if w.Code != tc.status || keys.refetches != tc.refetches {
				t.Fatalf("status %d, %d refetches; want %d, %d", w.Code, keys.refetches, tc.status, tc.refetches)
			}
		})
	}
}

func TestInboxStatuses(t *testing.T) {
	t.Parallel()
	alice := newPeer(t, "https://a.example/users/alice")
	rc := &recv{err: errors.New("database down")}
	h, _ := inbox.New(newKeyring(alice), rc.receive, nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, post(t, alice.signer, create(alice.actor, alice.actor+"/1")))
	if w.Code != 500 {
		t.Errorf("receive error: status %d; want 500", w.Code)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, inboxURL, nil))
	if w.Code != 405 {
		t.Errorf("GET: status %d; want 405", w.Code)
	}
}

// The signature window uses Config.Verifier's clock.
func TestInboxClock(t *testing.T) {
	t.Parallel()
	alice := newPeer(t, "https://a.example/users/alice")
	later := func() time.Time { return time.Now().Add(13 * time.Hour) }
	h, _ := inbox.New(newKeyring(alice), (&recv{}).receive, &inbox.Config{Verifier: sig.VerifierConfig{Now: later}})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, post(t, alice.signer, create(alice.actor, alice.actor+"/1")))
	if w.Code != 401 {
		t.Fatalf("a signature 13 h old: status %d; want 401", w.Code)
	}
}
