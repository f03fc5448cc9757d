package relay

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fedkit/fedkit/sig"
)

func TestKeyCache(t *testing.T) {
	k := loadKey(t, "a")
	pem, _ := sig.MarshalPublicKeyPEM(k.Public())
	actor := "https://a.example/users/a"
	key := map[string]any{"id": actor + "#main-key", "owner": actor, "publicKeyPem": string(pem)}
	other := map[string]any{"id": actor + "#other", "owner": actor, "publicKeyPem": string(pem)}
	standalone := map[string]any{"id": actor + "/main-key", "owner": actor, "publicKeyPem": string(pem)}
	tests := []struct {
		name    string
		docs    map[string]any
		keyID   string
		wantErr bool
	}{
		{name: "object", docs: map[string]any{actor: map[string]any{"id": actor, "publicKey": key}}, keyID: actor + "#main-key"},
		{name: "array", docs: map[string]any{actor: map[string]any{"id": actor, "publicKey": []any{other, key}}}, keyID: actor + "#main-key"},
		{name: "standalone key document", keyID: actor + "/main-key", docs: map[string]any{
			actor + "/main-key": standalone,
			actor:               map[string]any{"id": actor, "publicKey": standalone}}},
		{name: "standalone key its owner does not list", keyID: actor + "/main-key", wantErr: true, docs: map[string]any{
			actor + "/main-key": standalone,
			actor:               map[string]any{"id": actor, "publicKey": key}}},
		{name: "key owned by someone else", keyID: actor + "#main-key", wantErr: true, docs: map[string]any{
			actor: map[string]any{"id": actor, "publicKey": map[string]any{"id": actor + "#main-key", "owner": "https://b.example/x", "publicKeyPem": string(pem)}}}},
		{name: "no such key", keyID: actor + "#nope", wantErr: true, docs: map[string]any{actor: map[string]any{"id": actor, "publicKey": key}}},
		{name: "bad pem", keyID: actor + "#main-key", wantErr: true, docs: map[string]any{
			actor: map[string]any{"id": actor, "publicKey": map[string]any{"id": actor + "#main-key", "publicKeyPem": "nope"}}}},
		{name: "not found", keyID: actor + "#main-key", wantErr: true, docs: map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			look := &fakeLookup{docs: map[string][]byte{}, calls: map[string]int{}}
			for u, d := range tt.docs {
				look.set(u, d)
			}
			c := NewKeyCache(look, 0, 0, nil)
			id, err := sig.ParseKeyID(tt.keyID)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.ResolveKey(context.Background(), id)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("resolved %+v; want an error", got)
				}
				if tt.name == "no such key" && !errors.Is(err, ErrNoKey) {
					t.Fatalf("err = %v; want ErrNoKey", err)
				}
				return
			}
			if err != nil || got.Owner != actor {
				t.Fatalf("ResolveKey = %+v, %v", got, err)
			}
		})
	}
}

func TestKeyCacheCaches(t *testing.T) {
	k := loadKey(t, "a")
	pem, _ := sig.MarshalPublicKeyPEM(k.Public())
	actor := "https://a.example/actor"
	look := &fakeLookup{docs: map[string][]byte{}, calls: map[string]int{}}
	look.set(actor, map[string]any{"id": actor, "publicKey": map[string]any{"id": actor + "#main-key", "owner": actor, "publicKeyPem": string(pem)}})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewKeyCache(look, time.Hour, 2, func() time.Time { return now })
	id, _ := sig.ParseKeyID(actor + "#main-key")
	ctx := context.Background()
	for range 3 {
		if _, err := c.ResolveKey(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if look.calls[actor] != 1 {
		t.Fatalf("%d fetches; want 1 (cached)", look.calls[actor])
	}
	now = now.Add(2 * time.Hour)
	_, _ = c.ResolveKey(ctx, id)
	if look.calls[actor] != 2 {
		t.Fatalf("%d fetches after the TTL; want 2", look.calls[actor])
	}
	c.Forget(id.String())
	_, _ = c.ResolveKey(ctx, id)
	if look.calls[actor] != 3 {
		t.Fatalf("%d fetches after Forget; want 3", look.calls[actor])
	}
	// Failures are not cached.
	missing, _ := sig.ParseKeyID("https://b.example/actor#main-key")
	for range 2 {
		if _, err := c.ResolveKey(ctx, missing); err == nil {
			t.Fatal("resolved a missing key")
		}
	}
	if look.calls["https://b.example/actor"] != 2 {
		t.Fatalf("failed lookups were cached")
	}
}
