package pgavailability_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/driver/drivertest"
	"github.com/fedkit/fedkit/deliver/pgavailability"
	"github.com/fedkit/fedkit/internal/pgtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func migrated(t testing.TB) *pgavailability.Store {
	t.Helper()
	s, err := pgavailability.New(pgtest.Pool(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	drivertest.TestAvailabilityStore(t, func(t testing.TB) driver.AvailabilityStore { return migrated(t) })
}

func TestPruneAndConfig(t *testing.T) {
	s := migrated(t)
	ctx := context.Background()
	t0 := time.Date(2019, 3, 1, 12, 0, 0, 0, time.UTC)
	rule := driver.AvailabilityRule{Days: 2}
	for _, h := range []string{"old.example", "gone.example"} {
		if _, _, err := s.Failure(ctx, h, t0, rule); err != nil {
			t.Fatal(err)
		}
	}
	if _, down, _ := s.Failure(ctx, "gone.example", t0.Add(24*time.Hour), rule); !down {
		t.Fatal("gone.example not unavailable")
	}
	n, err := s.Prune(ctx, t0.Add(30*24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("pruned %d, %v; want old.example only", n, err)
	}
	if _, down, _ := s.Unavailable(ctx, "gone.example"); !down {
		t.Fatal("prune dropped an unavailable host")
	}
	if _, err := pgavailability.New(nil, nil); !errors.Is(err, pgavailability.ErrInvalidConfig) {
		t.Fatal(err)
	}
	if _, err := pgavailability.New(pgtest.Pool(t), &pgavailability.Config{Table: "a b"}); !errors.Is(err, pgavailability.ErrInvalidConfig) {
		t.Fatal(err)
	}
}
