package main

import (
	"context"
	"fmt"

	"github.com/fedkit/fedkit/examples/relay/internal/config"
	"github.com/fedkit/fedkit/sig"
	"github.com/fedkit/fedkit/sig/pgschemes"
	"github.com/fedkit/fedkit/sig/redisschemes"
)

// openSchemes picks the scheme memory shared by deliveries and fetches:
// Redis or Postgres when configured, so what each host accepted (and when,
// for the re-probe) survives restarts and is shared by every process; else
// memory.
func (a *app) openSchemes(ctx context.Context, cfg *config.Config) error {
	switch {
	case a.rdb != nil:
		a.schemes = redisschemes.New(a.rdb, &redisschemes.Config{KeyPrefix: cfg.RedisPrefix + "schemes:"})
	case a.pool != nil:
		st, err := pgschemes.New(a.pool, nil)
		if err != nil {
			return err
		}
		if err := st.Migrate(ctx); err != nil {
			return fmt.Errorf("schemes: %w", err)
		}
		a.schemes = st
	default:
		a.schemes = sig.NewHostSchemes(0)
	}
	return nil
}

// appSchemes is the fetcher's scheme store: the app's, opened after the
// fetcher is (nothing is fetched in between).
type appSchemes struct{ a *app }

var _ sig.LearnedSchemeStore = appSchemes{}

func (s appSchemes) Scheme(ctx context.Context, host string) (sig.Scheme, bool, error) {
	return s.a.schemes.Scheme(ctx, host)
}

func (s appSchemes) SetScheme(ctx context.Context, host string, sc sig.Scheme) error {
	return s.a.schemes.SetScheme(ctx, host, sc)
}

func (s appSchemes) Learned(ctx context.Context, host string) (sig.LearnedScheme, bool, error) {
	return s.a.schemes.Learned(ctx, host)
}

func (s appSchemes) Learn(ctx context.Context, host string, l sig.LearnedScheme) error {
	return s.a.schemes.Learn(ctx, host, l)
}
