package pgtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fedkit/fedkit/internal/fixture"
	"github.com/fedkit/fedkit/internal/testserver"
)

// Server starts a PostgreSQL server of the test's own, which the test may
// kill and restart (testserver.Server's Kill, Stop and Start); the machine's
// shared server is never used. Its URL names database postgres. It is killed
// and its data removed when the test ends. Without the binaries the test is
// skipped, or fails when CI=true.
func Server(t testing.TB) *testserver.Server {
	t.Helper()
	if testserver.FindBinary("initdb") == "" || testserver.FindBinary("postgres") == "" {
		fixture.Missing(t, "no initdb/postgres binaries: install postgresql")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := testserver.NewPostgres(ctx)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// Restart brings s back after a Kill or Stop, failing the test if it cannot.
func Restart(t testing.TB, s *testserver.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(fmt.Errorf("pgtest: restart: %w", err))
	}
}
