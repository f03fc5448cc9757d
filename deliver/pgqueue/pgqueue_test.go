package pgqueue_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/driver/drivertest"
	"github.com/fedkit/fedkit/deliver/pgqueue"
	"github.com/fedkit/fedkit/internal/pgtest"
)

// migrated returns a queue on pool with its tables migrated.
func migrated(t testing.TB, pool *pgxpool.Pool, cfg *pgqueue.Config) *pgqueue.Queue {
	t.Helper()
	q, err := pgqueue.New(pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return q
}

// newQueue returns a migrated queue in a fresh schema.
func newQueue(t testing.TB, cfg *pgqueue.Config) *pgqueue.Queue {
	t.Helper()
	return migrated(t, pgtest.Pool(t), cfg)
}

// openPool returns a pool of its own on connString, as another process
// would have, closed at cleanup; tune, when set, adjusts its config.
func openPool(t testing.TB, connString string, tune func(*pgxpool.Config)) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(connString)
	if err != nil {
		t.Fatal(err)
	}
	if tune != nil {
		tune(cfg)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// openQueue returns a migrated queue on a pool of its own on connString.
func openQueue(t testing.TB, connString string, cfg *pgqueue.Config) *pgqueue.Queue {
	t.Helper()
	return migrated(t, openPool(t, connString, nil), cfg)
}

func TestQueue(t *testing.T) {
	drivertest.TestQueue(t, func(t testing.TB) driver.Queue { return newQueue(t, nil) })
}

// Small fan-outs go through COPY too when the threshold says so.
func TestQueueCopyPath(t *testing.T) {
	drivertest.TestQueue(t, func(t testing.TB) driver.Queue {
		return newQueue(t, &pgqueue.Config{CopyThreshold: 1})
	})
}

// With DurableClaims every commit waits for disk; behaviour is the same.
func TestQueueDurableClaims(t *testing.T) {
	drivertest.TestQueue(t, func(t testing.TB) driver.Queue {
		return newQueue(t, &pgqueue.Config{DurableClaims: true})
	})
}

// The asynchronous commit of a claim and its forced generic plan stay in
// its own transaction: the caller's pooled connection keeps its settings.
func TestAsyncCommitDoesNotLeak(t *testing.T) {
	pool := openPool(t, pgtest.ConnString(t), func(c *pgxpool.Config) { c.MaxConns = 1 })
	q := migrated(t, pool, nil)
	ctx := context.Background()
	if err := q.Enqueue(ctx, env("sc", "https://b.example/inbox")); err != nil {
		t.Fatal(err)
	}
	jobs := claim(t, q, t0, 1)
	if err := q.Finish(ctx, jobs[0].Ref(), driver.Outcome{Result: driver.ResultDelivered, Attempts: 1}); err != nil {
		t.Fatal(err)
	}
	var sc string
	if err := pool.QueryRow(ctx, "SHOW synchronous_commit").Scan(&sc); err != nil || sc != "on" {
		t.Fatalf("synchronous_commit on the pool's connection = %q, %v; want on", sc, err)
	}
	var pcm string
	if err := pool.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&pcm); err != nil || pcm != "auto" {
		t.Fatalf("plan_cache_mode on the pool's connection = %q, %v; want auto", pcm, err)
	}
}
