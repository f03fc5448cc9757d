package pgstore_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/examples/relay/internal/store"
	"github.com/fedkit/fedkit/examples/relay/internal/store/pgstore"
	"github.com/fedkit/fedkit/examples/relay/internal/store/storetest"
	"github.com/fedkit/fedkit/internal/pgtest"
)

func TestStore(t *testing.T) {
	storetest.TestStore(t, func(t *testing.T) store.Store {
		s := pgstore.New(pgtest.Pool(t))
		for range 2 { // Migrate is safe to repeat
			if err := s.Migrate(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		return s
	})
}

func ExampleNew() {
	ctx := context.Background()
	var pool *pgxpool.Pool // yours, from pgxpool.New
	s := pgstore.New(pool)
	if err := s.Migrate(ctx); err != nil {
		return
	}
	_, _ = s.List(ctx)
}
