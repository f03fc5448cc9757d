package main

import (
	"context"
	"fmt"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/pgavailability"
	"github.com/fedkit/fedkit/deliver/redisavailability"
	"github.com/fedkit/fedkit/examples/relay/internal/config"
)

// openAvailability picks the deliverer's availability store: Redis when
// configured (shared by every process), else Postgres (shared as well),
// else memory, for one process. It names the backend for the CLI.
func (a *app) openAvailability(ctx context.Context, cfg *config.Config) error {
	switch {
	case a.rdb != nil:
		a.avail, a.availName = redisavailability.New(a.rdb, &redisavailability.Config{KeyPrefix: cfg.RedisPrefix + "availability:"}), "redis"
	case a.pool != nil:
		st, err := pgavailability.New(a.pool, nil)
		if err != nil {
			return err
		}
		if err := st.Migrate(ctx); err != nil {
			return fmt.Errorf("availability: %w", err)
		}
		a.avail, a.availName = st, "postgres"
	default:
		a.avail, a.availName = deliver.NewMemoryAvailabilityStore(0), "memory"
	}
	return nil
}

// appAlive is the fetcher's fetch.AliveRecorder: the availability store,
// opened after the fetcher is.
type appAlive struct{ a *app }

func (al appAlive) SeenAlive(ctx context.Context, host string) error {
	if al.a.avail == nil {
		return nil
	}
	return al.a.avail.SeenAlive(ctx, host)
}
