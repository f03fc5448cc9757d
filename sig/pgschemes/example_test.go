package pgschemes_test

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/sig/pgschemes"
)

// The scheme memory in Postgres, kept across restarts.
func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:5432/test")
	if err != nil {
		return
	}
	defer pool.Close()
	st, err := pgschemes.New(pool, nil)
	if err != nil || st.Migrate(ctx) != nil {
		return
	}
	cfg := deliver.DefaultConfig()
	cfg.Schemes = st
	_ = cfg
}
