package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fedkit/fedkit/examples/relay/internal/store"
)

// TestStore runs the suite; newStore returns an empty store isolated to t.
func TestStore(t *testing.T, newStore func(t *testing.T) store.Store) {
	ctx := context.Background()
	since := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	a := store.Subscriber{Actor: "https://a.example/actor", Inbox: "https://a.example/inbox", Host: "a.example",
		Style: store.StyleMastodon, FollowID: "https://a.example/f/1", State: store.StateActive, Since: since}
	b := store.Subscriber{Actor: "https://b.example/relay", Inbox: "https://b.example/inbox", Host: "b.example",
		Style: store.StyleLitePub, FollowID: "https://b.example/f/2", State: store.StatePending, Since: since}

	t.Run("put get list delete", func(t *testing.T) {
		s := newStore(t)
		if _, ok, err := s.Get(ctx, a.Actor); err != nil || ok {
			t.Fatalf("Get on empty store = %v, %v", ok, err)
		}
		for _, sub := range []store.Subscriber{b, a} {
			if err := s.Put(ctx, sub); err != nil {
				t.Fatal(err)
			}
		}
		got, ok, err := s.Get(ctx, b.Actor)
		if err != nil || !ok || got != b {
			t.Fatalf("Get = %+v, %v, %v; want %+v", got, ok, err, b)
		}
		list, err := s.List(ctx)
		if err != nil || len(list) != 2 || list[0] != a || list[1] != b {
			t.Fatalf("List = %+v, %v; want [a b] ordered by actor", list, err)
		}
		if ok, err := s.Delete(ctx, a.Actor); err != nil || !ok {
			t.Fatalf("Delete = %v, %v", ok, err)
		}
		if ok, err := s.Delete(ctx, a.Actor); err != nil || ok {
			t.Fatalf("second Delete = %v, %v; want false", ok, err)
		}
		if list, _ := s.List(ctx); len(list) != 1 || list[0] != b {
			t.Fatalf("List after Delete = %+v", list)
		}
	})
	t.Run("put replaces", func(t *testing.T) {
		s := newStore(t)
		if err := s.Put(ctx, b); err != nil {
			t.Fatal(err)
		}
		b2 := b
		b2.State = store.StateActive
		b2.Inbox = "https://b.example/shared"
		if err := s.Put(ctx, b2); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := s.Get(ctx, b.Actor); got != b2 {
			t.Fatalf("Get = %+v; want %+v", got, b2)
		}
	})
	t.Run("invalid refused", func(t *testing.T) {
		s := newStore(t)
		bad := a
		bad.Style = "diaspora"
		if err := s.Put(ctx, bad); !errors.Is(err, store.ErrInvalid) {
			t.Fatalf("Put(bad style) = %v; want ErrInvalid", err)
		}
		if list, _ := s.List(ctx); len(list) != 0 {
			t.Fatalf("invalid subscriber stored: %+v", list)
		}
	})
}
