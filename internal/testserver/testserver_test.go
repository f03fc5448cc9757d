package testserver_test

import (
	"context"
	"sync"
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

// A server of the test's own comes back from SIGKILL and from a clean stop
// on the same port with its committed data; a client that was connected
// sees the outage and reconnects.
func TestPostgresKillRestart(t *testing.T) {
	if testserver.FindBinary("initdb") == "" {
		fixture.Missing(t, "no initdb binary: install postgresql")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := testserver.NewPostgres(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr
	s.Kill()
	if s.Running() || testserver.Reachable(addr) {
		t.Fatal("server still up after Kill")
	}
	if err := conn.Ping(ctx); err == nil {
		t.Fatal("ping through a killed server succeeded")
	}
	conn.Close(ctx)
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if s.Addr != addr {
		t.Fatalf("restarted on %s, want %s", s.Addr, addr)
	}
	s.Stop()
	if testserver.Reachable(addr) {
		t.Fatal("server still up after Stop")
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err = pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT n FROM kept").Scan(&n); err != nil || n != 7 {
		t.Fatalf("after two restarts: n = %d, %v", n, err)
	}
}

// Redis restarts on its port; with an append-only file it keeps what it was
// told before SIGKILL.
func TestRedisKillRestart(t *testing.T) {
	if testserver.FindBinary("redis-server") == "" {
		fixture.Missing(t, "no redis-server binary: install redis-server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := testserver.NewRedis(ctx, "--appendonly", "yes", "--appendfsync", "always")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if err := c.Get(ctx, "k").Err(); err == nil {
		t.Fatal("GET through a killed server succeeded")
	}
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("after restart: %q, %v", v, err)
	}
}

// The cluster has three masters sharing every slot, and a cluster client
// reaches keys on each.
func TestCluster(t *testing.T) {
	if testserver.FindBinary("redis-server") == "" || testserver.FindBinary("redis-cli") == "" {
		fixture.Missing(t, "no redis-server / redis-cli binary: install redis-server and redis-tools")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := testserver.NewCluster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: cl.Addrs})
	defer c.Close()
	masters := map[string]bool{}
	for i := range 64 {
		k := "k" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		if err := c.Set(ctx, k, i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex // ForEachMaster calls in parallel
	if err := c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		n, err := m.DBSize(ctx).Result()
		if err == nil && n > 0 {
			mu.Lock()
			masters[m.Options().Addr] = true
			mu.Unlock()
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if len(masters) != testserver.ClusterNodes {
		t.Fatalf("keys on %d masters, want %d", len(masters), testserver.ClusterNodes)
	}
}
