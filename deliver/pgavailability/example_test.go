package pgavailability_test

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/pgavailability"
)

// Host availability in Postgres, shared by every process delivering.
func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:5432/test")
	if err != nil {
		return
	}
	defer pool.Close()
	st, err := pgavailability.New(pool, nil)
	if err != nil || st.Migrate(ctx) != nil {
		return
	}
	cfg := deliver.DefaultConfig()
	cfg.Availability.Store = st
	_ = cfg
}
