package pgstore_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
	"github.com/fedkit/fedkit/identity/pgstore"
	"github.com/fedkit/fedkit/internal/pgtest"
)

// gatedResolver holds its second lookup, the refresh's confirmation inside
// the lock, until the test lets it go.
type gatedResolver struct {
	*identitytest.Resolver
	calls   atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (g *gatedResolver) LookupDID(ctx context.Context, did identity.DID) (*identity.Identity, error) {
	if g.calls.Add(1) == 2 {
		close(g.entered)
		<-g.release
	}
	return g.Resolver.LookupDID(ctx, did)
}

// The Postgres server is killed -9 and restarted while a refresh holds the
// DID's lock: the lock died with its session, so the refresh fails closed
// and writes no handle, although the database (and the cache on it) is
// back before the refresh would write. The next event for the DID
// succeeds.
func TestLockLostToRestartFailsClosed(t *testing.T) {
	srv := pgtest.Server(t)
	ctx := context.Background()
	appPool, err := pgxpool.New(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(appPool.Close)
	pc, err := pgstore.LockPoolConfig(srv.URL, pgstore.LockPoolSizeDefault)
	if err != nil {
		t.Fatal(err)
	}
	lockPool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lockPool.Close)
	cacheStore, err := pgstore.NewCacheStore(appPool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cacheStore.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	store := identitytest.NewStore()
	store.Put(identity.Subject{DID: didA, Kind: identity.KindUser, Handle: "old.bridge.test", PDS: bridge})
	res := identitytest.NewResolver()
	res.Set(identity.Identity{DID: didA, Handle: "new.bridge.test", DeclaredHandle: "new.bridge.test", PDS: bridge})
	gated := &gatedResolver{Resolver: res, entered: make(chan struct{}), release: make(chan struct{})}
	lock := newLock(t, lockPool, namespace(t), 5*time.Second)
	cache, err := identity.NewCache(gated, cacheStore, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := identity.NewRefresher(gated, store, &identity.RefresherConfig{Cache: cache, Lock: lock, TrustedHosts: []string{"pds.bridge.test"}})
	if err != nil {
		t.Fatal(err)
	}

	// A test that fails half-way still lets the refresh go, so the pools'
	// cleanup does not wait for its connection forever.
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(gated.release) }) }
	t.Cleanup(release)
	done := make(chan error, 1)
	go func() { done <- r.RefreshHandle(ctx, didA) }()
	select {
	case <-gated.entered:
	case err := <-done:
		t.Fatalf("refresh ended before it took the lock: %v", err)
	}
	srv.Kill()
	pgtest.Restart(t, srv)
	// The application's pool is healthy again before the refresh goes on:
	// only the lock can tell that it was lost.
	appPool.Reset()
	for i := 0; ; i++ {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := appPool.Exec(pctx, "SELECT 1")
		cancel()
		if err == nil {
			break
		} else if i == 50 {
			t.Fatalf("application pool after the restart: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	release()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the refresh did not end a minute after its lock died")
	}
	if err == nil {
		t.Fatal("refresh succeeded after its lock died with the server")
	}
	if !errors.Is(err, identity.ErrUnresolved) {
		t.Fatalf("err = %v, want an unresolved (retryable) refresh", err)
	}
	if row, _ := store.Row(didA); store.Writes() != 0 || row.Handle != "old.bridge.test" {
		t.Fatalf("%d handle writes, handle %q: a refresh that lost its lock wrote", store.Writes(), row.Handle)
	}

	if err := r.HandleIdentityEvent(ctx, identity.IdentityEvent{DID: string(didA), Handle: "new.bridge.test"}); err != nil {
		t.Fatalf("next event: %v", err)
	}
	if row, _ := store.Row(didA); row.Handle != "new.bridge.test" {
		t.Fatalf("handle after the next event = %q, want new.bridge.test", row.Handle)
	}
}
