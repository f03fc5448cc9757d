package store_test

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/examples/appview/internal/store"
)

func ExampleMigrate() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://localhost/appview")
	if err != nil {
		panic(err)
	}
	defer pool.Close()
	if _, err := store.Migrate(ctx, pool); err != nil {
		panic(err)
	}
	s := store.New(pool)
	_, _ = s.ActorByHandle(ctx, "alice.lemmy.world.ap.tdpl.io")
}
