package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/internal/pgtest"
)

func schemaOf(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	var s string
	if err := pool.QueryRow(context.Background(), "SELECT current_schema()").Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPoolIsolatesAndDropsSchema(t *testing.T) {
	ctx := context.Background()
	var first string
	t.Run("a", func(t *testing.T) {
		pool := pgtest.Pool(t)
		first = schemaOf(t, pool)
		if _, err := pool.Exec(ctx, "CREATE TABLE things (id int)"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("b", func(t *testing.T) {
		pool := pgtest.Pool(t)
		if s := schemaOf(t, pool); s == first || s == "public" {
			t.Fatalf("schema %q not fresh (first %q)", s, first)
		}
		// The table of test a must not be visible here.
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("fresh schema has %d tables", n)
		}
	})
	pool, err := pgxpool.New(ctx, pgtest.BaseURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var exists bool
	if err := pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", first).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Fatalf("schema %s survived its test", first)
	}
}
