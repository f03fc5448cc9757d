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
	// InlineRetryDelays overrides the in-line retry waits of transient
	// failures (tests). Nil keeps the default.
	InlineRetryDelays []time.Duration
	// ResolveTimeout bounds each identity resolution (tests). Zero keeps
	// identity.ResolveTimeoutDefault.
	ResolveTimeout time.Duration
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
	if d.ResolveTimeout <= 0 {
		d.ResolveTimeout = identity.ResolveTimeoutDefault
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
	// Hosting instances are looked up through the cache: they are not the
	// repository being refreshed, and many communities share one.
	// Every resolution, by whichever path, has the refresh's bound: a PLC
	// server that never answers must not hold a lane longer on one path.
	hostedBy := ingest.HostedBy{Resolver: cache, Timeout: d.ResolveTimeout}
	ref, err := identity.NewRefresher(d.Resolver, st.Identity(), &identity.RefresherConfig{
		Cache:          cache,
		Lock:           lock,
		Community:      communityHooks{hostedBy: hostedBy},
		TrustedHosts:   cfg.TrustedHosts,
		ResolveTimeout: d.ResolveTimeout,
		Now:            d.Now,
		Logger:         d.Logger,
	})
	if err != nil {
		return nil, err
	}
	fresh, err := identity.NewOriginResolver(d.Resolver)
	if err != nil {
		return nil, err
	}
	adm, err := origin.NewAdmitter(fresh, &origin.AdmitConfig{
		TrustedHosts: cfg.TrustedHosts, Logger: d.Logger, ResolveTimeout: d.ResolveTimeout,
	})
	if err != nil {
		return nil, err
	}
	trusted, err := origin.NewTrustedHosts(cfg.TrustedHosts)
	if err != nil {
		return nil, err
	}
	ing, err := ingest.New(ingest.Deps{
		Store: st, Refresher: ref, Admitter: adm, Resolver: d.Resolver, Trusted: trusted, HostedBy: hostedBy,
	}, &ingest.Config{
		IndexAllProfiles:  cfg.IndexAllProfiles,
		RedriveInterval:   cfg.RedriveInterval,
		InlineRetryDelays: d.InlineRetryDelays,
		ResolveTimeout:    d.ResolveTimeout,
		Now:               d.Now,
		Logger:            d.Logger,
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

// communityHooks are the refresher's checks on a community's new handle:
// the AppView's community handle rule, and the stored hosted-by claim
// re-checked against the new verified handle.
type communityHooks struct{ hostedBy ingest.HostedBy }

func (communityHooks) ValidateHandle(h identity.Handle) error {
	return ingest.ValidateCommunityHandle(h)
}

// CheckHostedBy re-checks the row's stored hosted-by DID. A community whose
// profile asserted none (or had its claim refused) has no claim to re-check:
// its new handle is already verified both ways by the refresher.
func (c communityHooks) CheckHostedBy(ctx context.Context, s identity.Subject, id *identity.Identity) error {
	if s.HostedBy.IsZero() {
		return nil
	}
	h, err := identity.VerifiedHandle(id, s.DID)
	if err != nil {
		return err
	}
	return c.hostedBy.Check(ctx, s.HostedBy, h)
}
