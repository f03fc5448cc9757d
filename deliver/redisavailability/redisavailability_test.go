package redisavailability_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/deliver/driver/drivertest"
	"github.com/fedkit/fedkit/deliver/redisavailability"
	"github.com/fedkit/fedkit/internal/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestConformance(t *testing.T) {
	drivertest.TestAvailabilityStore(t, func(t testing.TB) driver.AvailabilityStore {
		c, prefix := redistest.Client(t)
		return redisavailability.New(c, &redisavailability.Config{KeyPrefix: prefix})
	})
}

// Two processes (two stores on one Redis) count one host's days together,
// and one's SeenAlive is the other's; keys expire as configured.
func TestAcrossProcesses(t *testing.T) {
	c, prefix := redistest.Client(t)
	ctx := context.Background()
	a := redisavailability.New(c, &redisavailability.Config{KeyPrefix: prefix, FailingTTL: time.Hour})
	b := redisavailability.New(c, &redisavailability.Config{KeyPrefix: prefix, FailingTTL: time.Hour})
	rule := driver.AvailabilityRule{Days: 2}
	t0 := time.Date(2031, 7, 1, 12, 0, 0, 0, time.UTC)
	if _, down, err := a.Failure(ctx, "h.example", t0, rule); err != nil || down {
		t.Fatal(down, err)
	}
	if ttl := c.PTTL(ctx, prefix+"{availability}:h:h.example").Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("failing host's ttl %v", ttl)
	}
	if _, down, err := b.Failure(ctx, "h.example", t0.Add(24*time.Hour), rule); err != nil || !down {
		t.Fatal(down, err)
	}
	if _, down, _ := a.Unavailable(ctx, "h.example"); !down {
		t.Fatal("a does not see what b recorded")
	}
	if err := a.SeenAlive(ctx, "h.example"); err != nil {
		t.Fatal(err)
	}
	if list, _ := b.ListUnavailable(ctx); len(list) != 0 {
		t.Fatalf("b lists %+v after a saw it alive", list)
	}
}
