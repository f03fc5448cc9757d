// Package pgtest gives each test its own PostgreSQL schema on a real server.
//
// The server is found in this order: FEDKIT_TEST_POSTGRES_URL; a server
// answering on 127.0.0.1:5432 (user postgres, database test); a throwaway
// server started from the initdb/postgres binaries. Without any of them the
// test is skipped with a hint, or fails when CI=true.
//
// A failure test takes a server of its own instead (Server), which it may
// kill -9 and restart (Restart) on the same port and data directory.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/internal/fixture"
	"github.com/fedkit/fedkit/internal/testserver"
)

// LocalURL is the server these machines run.
const LocalURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	once    sync.Once
	baseURL string
	findErr error
)

// BaseURL returns the server's URL, starting a throwaway server if needed.
func BaseURL(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		if u := os.Getenv("FEDKIT_TEST_POSTGRES_URL"); u != "" {
			baseURL = u
			return
		}
		if testserver.Reachable("127.0.0.1:5432") {
			baseURL = LocalURL
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		baseURL, findErr = testserver.StartPostgres(ctx)
	})
	if baseURL == "" {
		fixture.Missing(t, fmt.Sprintf("no PostgreSQL: set FEDKIT_TEST_POSTGRES_URL, run one on 127.0.0.1:5432, or install postgresql (%v)", findErr))
	}
	return baseURL
}

// ConnString creates a fresh schema and returns a connection string whose
// search_path is that schema. The schema is dropped when the test ends.
func ConnString(t testing.TB) string {
	t.Helper()
	base := BaseURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := connect(ctx, base)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(ctx)
	schema := "fedkit_test_" + randomHex()
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pgtest: create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := connect(ctx, base)
		if err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Pool returns a pool confined to a fresh schema; both are gone when the
// test ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	cs := ConnString(t)
	pool, err := pgxpool.New(context.Background(), cs)
	if err != nil {
		t.Fatalf("pgtest: pool: %v", err)
	}
	// Registered after ConnString's cleanup, so it runs first: the pool is
	// closed before its schema is dropped.
	t.Cleanup(pool.Close)
	return pool
}

// connect retries briefly: a server just started may refuse while it boots.
func connect(ctx context.Context, u string) (*pgx.Conn, error) {
	var lastErr error
	for i := 0; i < 50; i++ {
		c, err := pgx.Connect(ctx, u)
		if err == nil {
			return c, nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return nil, lastErr
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil, lastErr
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
