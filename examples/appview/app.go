package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/examples/appview/internal/ingest"
	"github.com/fedkit/fedkit/examples/appview/internal/store"
	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/pgstore"
	"github.com/fedkit/fedkit/origin"
)

// appDeps are the clients the app is built from; the caller owns them.
type appDeps struct {
	Pool     *pgxpool.Pool     // application pool
	LockPool *pgxpool.Pool     // separate pool for the per-DID advisory lock
	Resolver identity.Resolver // uncached
	// DB, if set, replaces Pool for the AppView tables (tests count
	// queries through it).
	DB     store.Querier
	Logger *slog.Logger
	Now    func() time.Time
	// LockWait overrides the lock's wait (tests). Zero keeps the default.
	LockWait time.Duration
}

// app is the wired AppView.
type app struct {
	store      *store.Store
	cacheStore *pgstore.CacheStore
	cache      *identity.Cache
	refresher  *identity.Refresher
	admitter   *origin.Admitter
	ingester   *ingest.Ingester
	log        *slog.Logger
}

func newApp(d appDeps, cfg Config) (*app, error) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	db := d.DB
	if db == nil {
		db = d.Pool
	}
	st := store.New(db)
	cs, err := pgstore.NewCacheStore(d.Pool, nil)
	if err != nil {
		return nil, err
	}
	cache, err := identity.NewCache(d.Resolver, cs, &identity.CacheConfig{Now: d.Now})
	if err != nil {
		return nil, err
	}
	lcfg := &pgstore.LockConfig{}
	if d.LockWait > 0 {
		lcfg.LockTimeout = d.LockWait
	}
	lock, err := pgstore.NewLock(d.LockPool, lcfg)
	if err != nil {
		return nil, err
	}
	ref, err := identity.NewRefresher(d.Resolver, st.Identity(), &identity.RefresherConfig{
		Cache:        cache,
		Lock:         lock,
		Community:    communityHooks{},
		TrustedHosts: cfg.TrustedHosts,
		Now:          d.Now,
		Logger:       d.Logger,
	})
	if err != nil {
		return nil, err
	}
	fresh, err := identity.NewOriginResolver(d.Resolver)
	if err != nil {
		return nil, err
	}
	adm, err := origin.NewAdmitter(fresh, &origin.AdmitConfig{
		TrustedHosts: cfg.TrustedHosts, Logger: d.Logger,
	})
	if err != nil {
		return nil, err
	}
	trusted, err := origin.NewTrustedHosts(cfg.TrustedHosts)
	if err != nil {
		return nil, err
	}
	ing, err := ingest.New(ingest.Deps{
		Store: st, Refresher: ref, Admitter: adm, Resolver: d.Resolver, Trusted: trusted,
	}, &ingest.Config{
		IndexAllProfiles: cfg.IndexAllProfiles,
		RedriveInterval:  cfg.RedriveInterval,
		Now:              d.Now,
		Logger:           d.Logger,
	})
	if err != nil {
		return nil, err
	}
	return &app{store: st, cacheStore: cs, cache: cache, refresher: ref, admitter: adm, ingester: ing, log: d.Logger}, nil
}

// migrate applies the AppView's migrations and the identity cache table.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := migrateVersions(ctx, pool)
	return err
}

// migrateVersions is migrate, reporting the versions it applied.
func migrateVersions(ctx context.Context, pool *pgxpool.Pool) ([]int, error) {
	applied, err := store.Migrate(ctx, pool)
	if err != nil {
		return nil, err
	}
	cs, err := pgstore.NewCacheStore(pool, nil)
	if err != nil {
		return nil, err
	}
	if err := cs.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("identity cache table: %w", err)
	}
	return applied, nil
}

// communityHooks accepts any syntactically valid handle and has no
// hosted-by record to re-check: this example's communities are plain
// bridged repositories.
type communityHooks struct{}

func (communityHooks) ValidateHandle(h identity.Handle) error {
	_, err := identity.ParseHandle(string(h))
	return err
}

func (communityHooks) CheckHostedBy(context.Context, identity.Subject, *identity.Identity) error {
	return nil
}
