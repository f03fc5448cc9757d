package redisschemes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fedkit/fedkit/internal/redistest"
	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/redisschemes"
	"github.com/fedkit/fedkit/sig/sigtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	// The suite includes sigtest.TestSchemeStore: deliver and fetch use the
	// store as their sig.SchemeStore.
	sigtest.TestLearnedSchemeStore(t, func(tb testing.TB) sig.LearnedSchemeStore {
		c, prefix := redistest.Client(tb)
		return redisschemes.New(c, &redisschemes.Config{KeyPrefix: prefix})
	})
}

// What one process learned, another (a restart) reads back; the key
// expires after TTL.
func TestSharedAndExpiring(t *testing.T) {
	c, prefix := redistest.Client(t)
	ctx := context.Background()
	a := redisschemes.New(c, &redisschemes.Config{KeyPrefix: prefix, TTL: time.Hour})
	at := time.Date(2031, 7, 1, 12, 0, 0, 0, time.UTC)
	if err := a.Learn(ctx, "h.example", sig.LearnedScheme{Scheme: sig.SchemeRFC9421, Learned: at}); err != nil {
		t.Fatal(err)
	}
	b := redisschemes.New(c, &redisschemes.Config{KeyPrefix: prefix})
	if l, ok, err := b.Learned(ctx, "h.example"); err != nil || !ok || l.Scheme != sig.SchemeRFC9421 || !l.Learned.Equal(at) {
		t.Fatalf("second store: %+v, %v, %v", l, ok, err)
	}
	if ttl := c.PTTL(ctx, a.Key("h.example")).Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("ttl %v, want at most an hour", ttl)
	}
	c.HSet(ctx, a.Key("bad.example"), "s", "nonsense")
	if _, _, err := a.Learned(ctx, "bad.example"); !errors.Is(err, redisschemes.ErrCorrupt) {
		t.Fatalf("corrupt value: %v", err)
	}
}
