package fetch_test

import (
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/internal/fixture"
	"github.com/fedkit/fedkit/sig"
)

// fakeDocs is a Lookuper serving fixed documents, as Lookup would have
// established them (id = the key of the map unless the document says
// otherwise), counting calls.
type fakeDocs struct {
	mu     sync.Mutex
	docs   map[string]string
	errs   map[string]error
	calls  map[string]int
	gate   chan struct{} // when set, each Lookup waits for it
	called atomic.Int64
}

func newFakeDocs() *fakeDocs {
	return &fakeDocs{docs: map[string]string{}, errs: map[string]error{}, calls: map[string]int{}}
}

func (f *fakeDocs) set(u string, doc any) {
	b, _ := json.Marshal(doc)
	f.mu.Lock()
	f.docs[u] = string(b)
	delete(f.errs, u)
	f.mu.Unlock()
}

func (f *fakeDocs) fail(u string, err error) {
	f.mu.Lock()
	f.errs[u] = err
	f.mu.Unlock()
}

func (f *fakeDocs) count(u string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[u]
}

func (f *fakeDocs) Lookup(ctx context.Context, raw string) (*fetch.Document, error) {
	f.called.Add(1)
	if f.gate != nil {
		<-f.gate
	}
	f.mu.Lock()
	f.calls[raw]++
	doc, ok := f.docs[raw]
	err := f.errs[raw]
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &fetch.StatusError{URL: raw, StatusCode: 404}
	}
	var h struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal([]byte(doc), &h)
	u, _ := url.Parse(raw)
	return &fetch.Document{URL: u, ID: h.ID, Raw: json.RawMessage(doc)}, nil
}

func edKey(t testing.TB) (crypto.PublicKey, string, string) {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := sig.MarshalPublicKeyPEM(pub)
	if err != nil {
		t.Fatal(err)
	}
	mk, err := sig.FormatMultikey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pub, string(pem), mk
}

func mustKeyID(t testing.TB, s string) sig.KeyID {
	t.Helper()
	id, err := sig.ParseKeyID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestKeyResolverShapes(t *testing.T) {
	t.Parallel()
	pub, pem, mk := edKey(t)
	_, otherPEM, _ := edKey(t)
	const actor = "https://a.example/users/alice"
	mainKey := map[string]any{"id": actor + "#main-key", "owner": actor, "publicKeyPem": pem}
	other := map[string]any{"id": actor + "#other", "owner": actor, "publicKeyPem": otherPEM}
	gtsKey := map[string]any{"id": actor + "/main-key", "owner": actor, "publicKeyPem": pem}
	tests := []struct {
		name  string
		docs  map[string]any
		keyID string
		err   error // nil: resolves to pub owned by actor
	}{
		{name: "Mastodon publicKey object", keyID: actor + "#main-key",
			docs: map[string]any{actor: map[string]any{"id": actor, "type": "Person", "publicKey": mainKey}}},
		{name: "Misskey publicKey array", keyID: actor + "#main-key",
			docs: map[string]any{actor: map[string]any{"id": actor, "publicKey": []any{other, mainKey}}}},
		{name: "Misskey Ed25519 key in additionalPublicKeys", keyID: actor + "#ed25519-key",
			docs: map[string]any{actor: map[string]any{"id": actor, "publicKey": other, "additionalPublicKeys": []any{
				map[string]any{"id": actor + "#ed25519-key", "type": "Key", "owner": actor, "publicKeyPem": pem}}}}},
		{name: "Pleroma key without owner, listed by its actor", keyID: actor + "#main-key",
			docs: map[string]any{actor: map[string]any{"id": actor, "publicKey": map[string]any{"id": actor + "#main-key", "publicKeyPem": pem}}}},
		{name: "GoToSocial key document, owner lists it", keyID: actor + "/main-key", docs: map[string]any{
			actor + "/main-key": gtsKey,
			actor:               map[string]any{"id": actor, "publicKey": gtsKey}}},
		{name: "GoToSocial key document, owner lists it by IRI", keyID: actor + "/main-key", docs: map[string]any{
			actor + "/main-key": gtsKey,
			actor:               map[string]any{"id": actor, "publicKey": actor + "/main-key"}}},
		{name: "GoToSocial stub actor served at the key URL", keyID: actor + "/main-key", docs: map[string]any{
			actor + "/main-key": map[string]any{"id": actor, "publicKey": gtsKey}}},
		{name: "FEP-521a Multikey in assertionMethod", keyID: actor + "#ed25519-key", docs: map[string]any{
			actor: map[string]any{"id": actor, "publicKey": other, "assertionMethod": []any{
				map[string]any{"id": actor + "#ed25519-key", "type": "Multikey", "controller": actor, "publicKeyMultibase": mk}}}}},
		{name: "Multikey controlled by another actor", keyID: actor + "#ed25519-key", err: fetch.ErrNoKey, docs: map[string]any{
			actor: map[string]any{"id": actor, "assertionMethod": map[string]any{"id": actor + "#ed25519-key", "type": "Multikey", "controller": "https://a.example/users/mallory", "publicKeyMultibase": mk}}}},
		{name: "key document its owner does not list", keyID: actor + "/main-key", err: fetch.ErrNoKey, docs: map[string]any{
			actor + "/main-key": gtsKey,
			actor:               map[string]any{"id": actor, "publicKey": mainKey}}},
		{name: "key document whose owner lists another key under its id", keyID: actor + "/main-key", err: fetch.ErrNoKey, docs: map[string]any{
			actor + "/main-key": gtsKey,
			actor:               map[string]any{"id": actor, "publicKey": map[string]any{"id": actor + "/main-key", "owner": actor, "publicKeyPem": otherPEM}}}},
		{name: "key document owned on another origin", keyID: actor + "/main-key", err: fetch.ErrNoKey, docs: map[string]any{
			actor + "/main-key":             map[string]any{"id": actor + "/main-key", "owner": "https://b.example/users/alice", "publicKeyPem": pem},
			"https://b.example/users/alice": map[string]any{"id": "https://b.example/users/alice", "publicKey": actor + "/main-key"}}},
		{name: "key document without owner", keyID: actor + "/main-key", err: fetch.ErrNoKey, docs: map[string]any{
			actor + "/main-key": map[string]any{"id": actor + "/main-key", "publicKeyPem": pem}}},
		{name: "key owned by someone else", keyID: actor + "#main-key", err: fetch.ErrNoKey, docs: map[string]any{
			actor: map[string]any{"id": actor, "publicKey": map[string]any{"id": actor + "#main-key", "owner": "https://b.example/x", "publicKeyPem": pem}}}},
		{name: "actor established on another origin", keyID: actor + "#main-key", err: fetch.ErrNoKey, docs: map[string]any{
			actor: map[string]any{"id": "https://b.example/users/alice", "publicKey": mainKey}}},
		{name: "no such key", keyID: actor + "#nope", err: fetch.ErrNoKey,
			docs: map[string]any{actor: map[string]any{"id": actor, "publicKey": mainKey}}},
		{name: "bad PEM", keyID: actor + "#main-key", err: sig.ErrMalformed, docs: map[string]any{
			actor: map[string]any{"id": actor, "publicKey": map[string]any{"id": actor + "#main-key", "publicKeyPem": "nope"}}}},
		{name: "not found", keyID: actor + "#main-key", err: fetch.ErrNotFound, docs: map[string]any{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			docs := newFakeDocs()
			for u, d := range tc.docs {
				docs.set(u, d)
			}
			r, err := fetch.NewKeyResolver(docs, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.ResolveKey(context.Background(), mustKeyID(t, tc.keyID))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("ResolveKey = %+v, %v; want %v", got, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ResolveKey: %v", err)
			}
			if got.Owner != actor || !pub.(ed25519.PublicKey).Equal(got.Public) {
				t.Fatalf("ResolveKey = owner %q, key %v", got.Owner, got.Public)
			}
		})
	}
}

// The Fedify actor of ../shared/fixtures/ldsig, as Fedify 2.3.8 serves it:
// its RSA publicKey and its Ed25519 Multikey both resolve.
func TestKeyResolverFedifyActor(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(fixture.SharedPath(t, "ldsig/fedify-actor.json"))
	if err != nil {
		t.Fatal(err)
	}
	docs := newFakeDocs()
	const actor = "https://actor.example/users/alice"
	docs.docs[actor] = string(raw)
	r, _ := fetch.NewKeyResolver(docs, nil)
	for _, tc := range []struct{ name, id, kind string }{
		{"publicKey RSA", actor + "#main-key", "*rsa.PublicKey"},
		{"assertionMethod Ed25519", actor + "#ed25519-key", "ed25519.PublicKey"},
	} {
		k, err := r.ResolveKey(context.Background(), mustKeyID(t, tc.id))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := typeName(k.Public); got != tc.kind || k.Owner != actor {
			t.Errorf("%s: %s owned by %q", tc.name, got, k.Owner)
		}
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

func TestKeyResolverGone(t *testing.T) {
	t.Parallel()
	const actor = "https://a.example/users/deleted"
	docs := newFakeDocs()
	docs.fail(actor, &fetch.StatusError{URL: actor, StatusCode: 410})
	r, _ := fetch.NewKeyResolver(docs, nil)
	_, err := r.ResolveKey(context.Background(), mustKeyID(t, actor+"#main-key"))
	if !errors.Is(err, sig.ErrGone) || !errors.Is(err, fetch.ErrGone) || !strings.Contains(err.Error(), actor) {
		t.Fatalf("err = %v; want ErrGone and sig.ErrGone naming %s", err, actor)
	}
	// A gone owner of a key document is gone as well.
	_, pem, _ := edKey(t)
	docs.set(actor+"/main-key", map[string]any{"id": actor + "/main-key", "owner": actor, "publicKeyPem": pem})
	if _, err := r.ResolveKey(context.Background(), mustKeyID(t, actor+"/main-key")); !errors.Is(err, sig.ErrGone) {
		t.Fatalf("owner gone: err = %v", err)
	}
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)} }
func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func actorWith(actor, pem string) map[string]any {
	return map[string]any{"id": actor, "publicKey": map[string]any{"id": actor + "#main-key", "owner": actor, "publicKeyPem": pem}}
}

func TestKeyResolverCaches(t *testing.T) {
	t.Parallel()
	_, pem, _ := edKey(t)
	const actor = "https://a.example/actor"
	docs := newFakeDocs()
	docs.set(actor, actorWith(actor, pem))
	clk := newClock()
	r, _ := fetch.NewKeyResolver(docs, &fetch.KeyResolverConfig{TTL: time.Hour, NegativeTTL: time.Minute, Now: clk.now})
	id := mustKeyID(t, actor+"#main-key")
	ctx := context.Background()
	for range 3 {
		if _, err := r.ResolveKey(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if n := docs.count(actor); n != 1 {
		t.Fatalf("%d fetches; want 1 (cached)", n)
	}
	clk.add(time.Hour)
	_, _ = r.ResolveKey(ctx, id)
	if n := docs.count(actor); n != 2 {
		t.Fatalf("%d fetches after the TTL; want 2", n)
	}
	r.Forget(id)
	_, _ = r.ResolveKey(ctx, id)
	if n := docs.count(actor); n != 3 {
		t.Fatalf("%d fetches after Forget; want 3", n)
	}

	t.Run("negative cache", func(t *testing.T) {
		missing := mustKeyID(t, "https://b.example/actor#main-key")
		for range 3 {
			if _, err := r.ResolveKey(ctx, missing); !errors.Is(err, fetch.ErrNotFound) {
				t.Fatalf("err = %v", err)
			}
		}
		if n := docs.count("https://b.example/actor"); n != 1 {
			t.Fatalf("%d fetches of a missing key; want 1 (failure cached)", n)
		}
		clk.add(time.Minute)
		_, _ = r.ResolveKey(ctx, missing)
		if n := docs.count("https://b.example/actor"); n != 2 {
			t.Fatalf("%d fetches after NegativeTTL; want 2", n)
		}
	})

	t.Run("a server timing out is cached", func(t *testing.T) {
		const a = "https://slow.example/actor"
		docs.fail(a, fmt.Errorf("fetch: %w", context.DeadlineExceeded))
		sid := mustKeyID(t, a+"#main-key")
		_, _ = r.ResolveKey(ctx, sid)
		_, _ = r.ResolveKey(ctx, sid)
		if n := docs.count(a); n != 1 {
			t.Fatalf("%d fetches of a timing-out server; want 1", n)
		}
	})

	t.Run("budget exhaustion is not cached", func(t *testing.T) {
		const a = "https://c.example/actor"
		docs.fail(a, fetch.ErrBudgetExhausted)
		cid := mustKeyID(t, a+"#main-key")
		_, _ = r.ResolveKey(ctx, cid)
		docs.set(a, actorWith(a, pem))
		if _, err := r.ResolveKey(ctx, cid); err != nil {
			t.Fatalf("after a budget failure: %v", err)
		}
	})
}

func TestKeyResolverNegativeCacheDisabled(t *testing.T) {
	t.Parallel()
	docs := newFakeDocs()
	r, _ := fetch.NewKeyResolver(docs, &fetch.KeyResolverConfig{DisableNegativeCache: true})
	id := mustKeyID(t, "https://b.example/actor#main-key")
	for range 3 {
		_, _ = r.ResolveKey(context.Background(), id)
	}
	if n := docs.count("https://b.example/actor"); n != 3 {
		t.Fatalf("%d fetches; want 3", n)
	}
}

func TestKeyResolverCoalesces(t *testing.T) {
	t.Parallel()
	_, pem, _ := edKey(t)
	const actor = "https://a.example/actor"
	docs := newFakeDocs()
	docs.set(actor, actorWith(actor, pem))
	docs.gate = make(chan struct{})
	r, _ := fetch.NewKeyResolver(docs, nil)
	id := mustKeyID(t, actor+"#main-key")
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := r.ResolveKey(context.Background(), id)
			errs <- err
		})
	}
	// Let the one fetch through only once every caller waits on it.
	for docs.called.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(docs.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := docs.count(actor); got != 1 {
		t.Fatalf("%d fetches for %d concurrent misses; want 1", got, n)
	}
	if r.Fetches() != 1 {
		t.Fatalf("Fetches() = %d", r.Fetches())
	}
}

func TestKeyResolverCallerCancelDoesNotFailOthers(t *testing.T) {
	t.Parallel()
	_, pem, _ := edKey(t)
	const actor = "https://a.example/actor"
	docs := newFakeDocs()
	docs.set(actor, actorWith(actor, pem))
	docs.gate = make(chan struct{})
	r, _ := fetch.NewKeyResolver(docs, nil)
	id := mustKeyID(t, actor+"#main-key")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := r.ResolveKey(ctx, id); done <- err }()
	for docs.called.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: %v", err)
	}
	close(docs.gate)
	if _, err := r.ResolveKey(context.Background(), id); err != nil {
		t.Fatalf("second caller: %v", err)
	}
	if got := docs.count(actor); got != 1 {
		t.Fatalf("%d fetches; want 1 (the first fetch finished for the cache)", got)
	}
}

func TestKeyResolverBounded(t *testing.T) {
	t.Parallel()
	_, pem, _ := edKey(t)
	docs := newFakeDocs()
	r, _ := fetch.NewKeyResolver(docs, &fetch.KeyResolverConfig{MaxEntries: 10})
	ctx := context.Background()
	ids := make([]sig.KeyID, 50)
	for i := range ids {
		a := "https://a.example/u" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		docs.set(a, actorWith(a, pem))
		ids[i] = mustKeyID(t, a+"#main-key")
		if _, err := r.ResolveKey(ctx, ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	before := docs.called.Load()
	for _, id := range ids {
		_, _ = r.ResolveKey(ctx, id)
	}
	// With room for 10, at least 40 of the 50 must have been fetched again.
	if refetched := docs.called.Load() - before; refetched < 40 {
		t.Fatalf("%d of 50 refetched; the cache holds more than its bound", refetched)
	}
}

func TestKeyResolverRefetchKey(t *testing.T) {
	t.Parallel()
	pub1, pem1, _ := edKey(t)
	pub2, pem2, _ := edKey(t)
	const actor = "https://a.example/actor"
	docs := newFakeDocs()
	docs.set(actor, actorWith(actor, pem1))
	clk := newClock()
	r, _ := fetch.NewKeyResolver(docs, &fetch.KeyResolverConfig{RefetchInterval: time.Minute, Now: clk.now})
	id := mustKeyID(t, actor+"#main-key")
	ctx := context.Background()
	k, _ := r.ResolveKey(ctx, id)
	if !pub1.(ed25519.PublicKey).Equal(k.Public) {
		t.Fatal("first key")
	}
	docs.set(actor, actorWith(actor, pem2)) // rotated right after the fetch
	k, err := r.RefetchKey(ctx, id)
	if err != nil || !pub2.(ed25519.PublicKey).Equal(k.Public) {
		t.Fatalf("RefetchKey = %v, %v; want the rotated key", k, err)
	}
	if k, _ := r.ResolveKey(ctx, id); !pub2.(ed25519.PublicKey).Equal(k.Public) {
		t.Fatal("ResolveKey after the refetch returned the old key")
	}
	clk.add(time.Minute - time.Second)
	if _, err := r.RefetchKey(ctx, id); !errors.Is(err, fetch.ErrRefetchTooSoon) {
		t.Fatalf("second refetch within the interval: %v; want ErrRefetchTooSoon", err)
	}
	if n := docs.count(actor); n != 2 {
		t.Fatalf("%d fetches; want 2", n)
	}

	t.Run("a failed refetch keeps the key", func(t *testing.T) {
		clk.add(time.Minute)
		docs.fail(actor, &fetch.StatusError{URL: actor, StatusCode: 503})
		if _, err := r.RefetchKey(ctx, id); !errors.Is(err, fetch.ErrTemporary) {
			t.Fatalf("err = %v", err)
		}
		if k, err := r.ResolveKey(ctx, id); err != nil || !pub2.(ed25519.PublicKey).Equal(k.Public) {
			t.Fatalf("after a failed refetch: %v, %v", k, err)
		}
		if _, err := r.RefetchKey(ctx, id); !errors.Is(err, fetch.ErrRefetchTooSoon) {
			t.Fatalf("a failed refetch must count for the rate limit: %v", err)
		}
	})

	t.Run("refetch of a key never resolved", func(t *testing.T) {
		other := mustKeyID(t, "https://d.example/actor#main-key")
		if _, err := r.RefetchKey(ctx, other); !errors.Is(err, fetch.ErrNotFound) {
			t.Fatalf("err = %v", err)
		}
		if _, err := r.RefetchKey(ctx, other); !errors.Is(err, fetch.ErrRefetchTooSoon) {
			t.Fatalf("err = %v; want ErrRefetchTooSoon", err)
		}
	})
}

// Keys are fetched signed as the instance actor when a Signer is given, for
// servers with authorized fetch.
func TestKeyResolverSignedFetch(t *testing.T) {
	t.Parallel()
	sg := newSigning(t)
	_, pem, _ := edKey(t)
	s := newSite(t, "secure.test")
	af := &authorizedFetch{}
	actor := s.url("/users/alice")
	doc, _ := json.Marshal(actorWith(actor, pem))
	s.mux.HandleFunc("/users/alice", af.handler(sg, map[sig.Scheme]bool{sig.SchemeCavage: true}, string(doc)))
	f := newFetcher(t, nil)
	for _, tc := range []struct {
		name   string
		signer fetch.RequestSigner
		ok     bool
	}{{"unsigned is refused", nil, false}, {"signed as the instance actor", sg.signer, true}} {
		r, _ := fetch.NewKeyResolver(f, &fetch.KeyResolverConfig{Signer: tc.signer})
		_, err := r.ResolveKey(context.Background(), mustKeyID(t, actor+"#main-key"))
		if (err == nil) != tc.ok {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
	// The instance key is Ed25519, so the signed GET tries RFC 9421 first
	// (Fedify's cavage verifier is RSA-only) and, refused by this
	// cavage-only server, knocks once more with draft-cavage.
	if got := fmtList(af.seen()); got != "[none rfc9421 cavage]" {
		t.Errorf("server saw %s", got)
	}
}

// Through a real Fetcher on loopback: GoToSocial serves the key at
// actor/main-key as a stub of the actor, and the actor itself; a
// Mastodon-shaped server serves the actor with its key.
func TestKeyResolverLoopback(t *testing.T) {
	t.Parallel()
	pub, pem, _ := edKey(t)
	gts := newSite(t, "gts.test")
	actor := gts.url("/users/bob")
	stub, _ := json.Marshal(map[string]any{"id": actor, "type": "Person",
		"publicKey": map[string]any{"id": actor + "/main-key", "owner": actor, "publicKeyPem": pem}})
	gts.ap("/users/bob/main-key", string(stub))
	gts.ap("/users/bob", string(stub))
	masto := newSite(t, "mastodon.test")
	malice := masto.url("/users/alice")
	doc, _ := json.Marshal(actorWith(malice, pem))
	masto.ap("/users/alice", string(doc))
	// An actor document served by another origin than its id claims.
	masto.ap("/users/mallory", strings.ReplaceAll(string(doc), masto.base, gts.base))
	r, _ := fetch.NewKeyResolver(newFetcher(t, nil), nil)
	for _, tc := range []struct {
		name, keyID, owner string
	}{
		{"GoToSocial", actor + "/main-key", actor},
		{"Mastodon", malice + "#main-key", malice},
		{"actor from another origin", masto.url("/users/mallory") + "#main-key", ""},
	} {
		k, err := r.ResolveKey(context.Background(), mustKeyID(t, tc.keyID))
		if tc.owner == "" {
			if err == nil {
				t.Errorf("%s: resolved %+v", tc.name, k)
			}
			continue
		}
		if err != nil || k.Owner != tc.owner || !pub.(ed25519.PublicKey).Equal(k.Public) {
			t.Errorf("%s: %+v, %v", tc.name, k, err)
		}
	}
}
