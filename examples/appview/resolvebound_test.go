package main

import (
	"strings"
	"testing"
	"time"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/origin"
)

// TestNewRowResolvesOnce: a profile event of an unknown DID resolves it
// once, whether admission resolved it (fields asserted) or the new row did
// (nothing asserted): the admission's resolution creates the row.
func TestNewRowResolvesOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		handle string
		frame  func(did string) []byte
	}{
		{"user asserting fields", "alice.lemmy.world.ap.bridge.test", func(did string) []byte {
			return profileFrame(did, "3laaa", bridgedFields("Alice", "lemmy.world"))
		}},
		{"user asserting nothing", "bob.lemmy.world.ap.bridge.test", func(did string) []byte {
			return profileFrame(did, "3laaa", nil)
		}},
		{"community asserting an origin", "news.lemmy.world.ap.bridge.test", func(did string) []byte {
			return communityFrame(did, "3laaa", map[string]any{"origin": "lemmy.world", "originUrl": "https://lemmy.world/c/news", "originSoftware": "lemmy"})
		}},
		{"community asserting nothing", "tech.lemmy.world.ap.bridge.test", func(did string) []byte {
			return communityFrame(did, "3laaa", nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := setup(t)
			did := plcDID("new")
			h.net.Claim(did, tc.handle, bridgePDS)
			h.handle(tc.frame(did))
			if !h.exists(did) {
				t.Fatal("no row created")
			}
			if got := h.actor(did).Handle; got != tc.handle {
				t.Errorf("handle = %q, want %q", got, tc.handle)
			}
			if n := h.net.PLCHits(did); n != 1 {
				t.Errorf("DID document fetched %d times for one event, want 1", n)
			}
			if n := h.net.WellKnownHits(tc.handle); n != 1 {
				t.Errorf("handle verified %d times for one event, want 1", n)
			}
		})
	}
}

// TestNewRowResolutionBounded: a PLC server that never answers, or trickles
// its body, holds a profile event of an unknown DID no longer than the
// identity resolve timeout (5 s by default; short here), and the event is
// redriven as a resolve timeout. Nothing is asserted about how long it took.
func TestNewRowResolutionBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		trickle bool
		fields  map[string]any
		code    string
	}{
		{"never answers, fields asserted", false, bridgedFields("Alice", "lemmy.world"), "origin-" + string(origin.ReasonResolveTimeout)},
		{"trickles, fields asserted", true, bridgedFields("Alice", "lemmy.world"), "origin-" + string(origin.ReasonResolveTimeout)},
		{"never answers, nothing asserted", false, nil, identity.ReasonResolveTimeout},
		{"trickles, nothing asserted", true, nil, identity.ReasonResolveTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := setup(t)
			h.resolveTimeout = 200 * time.Millisecond
			h.app = h.newApp(h.db)
			did := plcDID("slow")
			h.net.Claim(did, "alice.lemmy.world.ap.bridge.test", bridgePDS)
			if tc.trickle {
				h.net.Trickle(did, time.Second)
			} else {
				h.net.Delay(did, time.Hour)
			}
			h.handle(profileFrame(did, "3laaa", tc.fields))
			if h.exists(did) {
				t.Error("row created without a resolution")
			}
			n, _, code, _ := h.redriveRows(did)
			if n != 1 || code != tc.code {
				t.Errorf("redrive rows %d, code %q; want 1, %q", n, code, tc.code)
			}
			if !strings.Contains(h.logs.String(), "queued for redrive") {
				t.Errorf("log: %s", h.logs.String())
			}
		})
	}
}

// TestRecordTextWithNUL: a record's strings may carry \u0000, which JSON
// allows and PostgreSQL text refuses. Such a post or profile is stored
// without the NULs, not failed as a database error and redriven ten times.
func TestRecordTextWithNUL(t *testing.T) {
	t.Parallel()
	h := setup(t)
	alice := plcDID("alice")
	h.net.Claim(alice, "alice.lemmy.world.ap.bridge.test", bridgePDS)
	h.handle(profileFrame(alice, "3laaa", map[string]any{"displayName": "Al\u0000ice", "description": "\u0000"}))
	h.handle(commitFrame(alice, "app.bsky.feed.post", "3lp1", "3lab1", "create", map[string]any{"text": "he\u0000llo", "createdAt": "2026-11-29T12:00:00Z"}))
	if n, _, code, _ := h.redriveRows(alice); n != 0 {
		t.Fatalf("queued for redrive (%s)", code)
	}
	if a := h.actor(alice); a.DisplayName != "Alice" || a.Description != "" {
		t.Errorf("profile %q %q, want the NULs dropped", a.DisplayName, a.Description)
	}
	posts, err := h.app.store.PostsByAuthor(h.ctx, alice, time.Time{}, "", 10)
	if err != nil || len(posts) != 1 || posts[0].Text != "hello" {
		t.Fatalf("posts %+v, %v; want one, text %q", posts, err, "hello")
	}
}
