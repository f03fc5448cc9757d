package testserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/fedkit/fedkit/internal/fixture"
	"github.com/fedkit/fedkit/internal/testserver"
)

// These prove the fallback used on machines without running servers.
// CI installs the binaries, so there they must work.

func TestStartPostgres(t *testing.T) {
	if testserver.FindBinary("initdb") == "" {
		fixture.Missing(t, "no initdb binary: install postgresql")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	u, err := testserver.StartPostgres(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(testserver.Stop)
	var conn *pgx.Conn
	for i := 0; i < 50; i++ {
		if conn, err = pgx.Connect(ctx, u); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("SELECT 1 = %d, %v", one, err)
	}
}

func TestStartRedis(t *testing.T) {
	if testserver.FindBinary("redis-server") == "" {
		fixture.Missing(t, "no redis-server binary: install redis-server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr, err := testserver.StartRedis(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(testserver.Stop)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestReachable(t *testing.T) {
	if testserver.Reachable("127.0.0.1:1") {
		t.Fatal("port 1 should not answer")
	}
}
