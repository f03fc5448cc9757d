package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/fedkit/fedkit/examples/relay/internal/relay"
	"github.com/fedkit/fedkit/examples/relay/internal/relay/seentest"
	"github.com/fedkit/fedkit/examples/relay/internal/store/pgstore"
	"github.com/fedkit/fedkit/internal/pgtest"
)

var _ relay.SeenSet = (*pgstore.Seen)(nil)

func TestSeen(t *testing.T) {
	seentest.TestSeenSet(t, func(t *testing.T) relay.SeenSet {
		pool := pgtest.Pool(t)
		if err := pgstore.New(pool).Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		return pgstore.NewSeen(pool)
	})
}

// TestSeenExpires: a mark whose window has passed is new again, and the
// expired marks are deleted as Marks go by.
func TestSeenExpires(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if err := pgstore.New(pool).Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	s := pgstore.NewSeen(pool)
	if ok, err := s.Mark(ctx, "activity:1", time.Hour); err != nil || !ok {
		t.Fatalf("Mark = %v, %v", ok, err)
	}
	// The window passes (by the database's clock, which a test cannot set).
	if _, err := pool.Exec(ctx, `UPDATE relay_seen SET expires = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	if has, _ := s.Has(ctx, "activity:1"); has {
		t.Fatal("Has of an expired mark")
	}
	if ok, err := s.Mark(ctx, "activity:1", time.Hour); err != nil || !ok {
		t.Fatalf("Mark after the window = %v, %v; want true", ok, err)
	}
	if _, err := pool.Exec(ctx, `UPDATE relay_seen SET expires = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	for i := range pgstore.PruneEveryDefault {
		if _, err := s.Mark(ctx, "other:"+string(rune('a'+i%26))+string(rune('a'+i/26%26)), time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM relay_seen WHERE expires <= now()`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d expired marks left after %d Marks (%v); want them pruned", n, pgstore.PruneEveryDefault, err)
	}
}
