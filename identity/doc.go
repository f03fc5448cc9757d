// Package identity resolves atproto identities and keeps an application's
// stored handles current: typed DIDs and handles, an uncached resolver
// (PLC directory, did:web, DNS TXT and HTTPS well-known handles) behind the
// guarded client, a purgeable caching resolver, and a Refresher that applies
// Jetstream identity events and reconciliation sweeps under a per-DID lock.
//
// The application owns its tables and supplies small interfaces: a Store
// (one indexed read by DID, a handle write, an origin clear), a Lister for
// sweeps and CommunityHooks for community handles. Backends live in
// subpackages: pgstore holds the Postgres advisory lock and cache table;
// identitytest holds an offline network and conformance suites.
//
//	c, _ := client.New(nil)
//	res, _ := identity.NewResolver(c, net.DefaultResolver, nil)
//	cache, _ := identity.NewCache(res, cacheStore, nil) // for read paths
//	lock, _ := pgstore.NewLock(lockPool, nil)           // a pool of its own, at most 8
//	ref, _ := identity.NewRefresher(res, appStore, &identity.RefresherConfig{
//		Cache: cache, Lock: lock, TrustedHosts: []string{"pds.bridge.example"},
//	})
//	err := ref.HandleIdentityEvent(ctx, ev)
//	switch {
//	case errors.Is(err, identity.ErrPermanent): // drop the event
//	case errors.Is(err, identity.ErrDeferred): // redrive without spending an attempt
//	case errors.Is(err, identity.ErrUnresolved): // redrive later
//	}
//
// # Refresh
//
// RefreshHandle follows one order: purge the DID from the cache; check the
// timeout debounce; resolve uncached under a 5-second deadline; verify the
// handle both ways; take the per-DID lock; re-read the stored handle; purge
// the old handle's cache entry; write the new handle. A handle about to be
// written is first confirmed by a resolution made inside the lock, so a
// refresher that resolved before a rename cannot revert one that resolved
// after it. A refresh whose resolution hit its deadline (not a fast failure,
// not the caller's cancellation) is remembered for DebounceTTL: later events
// still purge the cache but defer without resolving.
//
// A nil Lock, or one whose Wait is not positive, fails every refresh closed
// before anything is purged. A DID whose fresh resolution shows it has left
// the bridge (see origin.Admitter.ClearOnRefresh) has its origin fields
// cleared at the same time; a community keeps an origin the spec's
// own-domain rule allows it when the Store supplies Subject.Origin.
//
// A Store may also implement HandleHolder, to let a refresh whose new handle
// another row still holds refresh that row first, and PDSSetter, to keep the
// stored PDS URL current.
//
// # Cache
//
// Cache serves verified identities from a CacheStore for CacheConfig.TTL
// (24 hours) and remembers, per process, DID lookups that failed or found
// no verified handle for NegativeTTL (90 seconds), as Coves' negative cache
// does: never a caller's cancellation, an invalid DID or a handle lookup.
// Purge forgets both. Nothing that decides (a refresh, an admission) reads
// through the Cache.
//
// # Identity events
//
// HandleIdentityEvent looks the DID up first: Jetstream sends every
// network's identity events to every subscriber, so an unknown DID must cost
// one indexed read and no resolution. A known DID is refreshed on every
// event; the event's handle is never trusted. HandleAccountEvent purges the
// caches and clears the origin fields of an account deleted or taken down.
//
// # Sweep
//
// Sweep re-checks every row the application lists on a trusted bridge PDS
// and writes through the same locked refresh. DryRun resolves and verifies
// only; the report has one reason code per row, and AllMatched is true only
// when every checked row ends matching its verified handle. A Lister that is
// also an OriginLister lets the sweep visit rows holding origin fields whose
// stored PDS is off the trusted list, so removing a host from the list
// clears its rows' fields at the next sweep; SweepOpts.TrustedHosts replaces
// the configured list for both the selection and that decision.
//
// # Telemetry
//
// RefresherConfig.TracerProvider and MeterProvider default to
// OpenTelemetry's global providers, no-ops until the application installs
// its own; this package uses the OpenTelemetry API only. Attribute names
// are listed in one place, internal/otelx.
//
// Span identity.refresh (internal), one per refresh, with
// fedkit.identity.did, fedkit.identity.refresh.trigger (call for
// RefreshHandle, identity_event, sweep, or incumbent for the row holding
// a refresh's new handle, whose span is a child of that refresh's) and on
// return fedkit.identity.refresh.reason (a Reason code: matched, updated, or
// the failure's), fedkit.identity.refresh.updated,
// fedkit.identity.refresh.origin_cleared and
// fedkit.identity.refresh.incumbent_refreshed; a failed refresh has status
// Error, error.type set to its Reason and fedkit.identity.refresh.class.
// The lock, store and resolver calls run under the span's context.
//
// Metric fedkit.identity.refreshes, an int64 counter by
// fedkit.identity.refresh.trigger and fedkit.identity.refresh.reason: both
// closed sets, never a DID or a handle. Dry-run sweeps, account events and
// identity events for unknown DIDs refresh nothing and are not counted.
package identity
