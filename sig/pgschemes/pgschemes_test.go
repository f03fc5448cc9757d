package pgschemes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fedkit/fedkit/internal/pgtest"
	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/pgschemes"
	"github.com/fedkit/fedkit/sig/sigtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func migrated(t testing.TB) (*pgschemes.Store, func() *pgschemes.Store) {
	t.Helper()
	pool := pgtest.Pool(t)
	s, err := pgschemes.New(pool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, func() *pgschemes.Store { s2, _ := pgschemes.New(pool, nil); return s2 }
}

func TestConformance(t *testing.T) {
	// The suite includes sigtest.TestSchemeStore: deliver and fetch use the
	// store as their sig.SchemeStore.
	sigtest.TestLearnedSchemeStore(t, func(tb testing.TB) sig.LearnedSchemeStore {
		s, _ := migrated(tb)
		return s
	})
}

// What one process learned, another (a restart) reads back; Migrate is
// idempotent; a bad table name is refused.
func TestSharedAcrossStores(t *testing.T) {
	a, again := migrated(t)
	ctx := context.Background()
	at := time.Date(2019, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := a.Learn(ctx, "h.example", sig.LearnedScheme{Scheme: sig.SchemeCavage, Learned: at}); err != nil {
		t.Fatal(err)
	}
	b := again()
	if err := b.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if l, ok, err := b.Learned(ctx, "h.example"); err != nil || !ok || l.Scheme != sig.SchemeCavage || !l.Learned.Equal(at) {
		t.Fatalf("second store: %+v, %v, %v", l, ok, err)
	}
	if _, err := pgschemes.New(nil, nil); !errors.Is(err, pgschemes.ErrInvalidConfig) {
		t.Fatalf("nil pool: %v", err)
	}
	if _, err := pgschemes.New(pgtest.Pool(t), &pgschemes.Config{Table: "x; DROP TABLE y"}); !errors.Is(err, pgschemes.ErrInvalidConfig) {
		t.Fatalf("bad table: %v", err)
	}
}
