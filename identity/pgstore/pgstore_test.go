package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/identity"
	"github.com/fedkit/fedkit/identity/identitytest"
	"github.com/fedkit/fedkit/identity/pgstore"
	"github.com/fedkit/fedkit/internal/pgtest"
)

const (
	didA   = identitytest.DIDAlice
	didB   = identitytest.DIDBob
	bridge = "https://pds.bridge.test"
)

// namespace is unique per test: advisory locks are database-wide, and other
// packages' tests share the server.
func namespace(t testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "fedkit-test/" + hex.EncodeToString(b[:]) + "/"
}

// lockPool is a dedicated pool built with LockPoolConfig, as production does.
func lockPool(t testing.TB, size int32) *pgxpool.Pool {
	t.Helper()
	pc, err := pgstore.LockPoolConfig(pgtest.ConnString(t), size)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), pc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func newLock(t testing.TB, pool *pgxpool.Pool, ns string, wait time.Duration) *pgstore.Lock {
	t.Helper()
	l, err := pgstore.NewLock(pool, &pgstore.LockConfig{Namespace: ns, LockTimeout: wait})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLockKeyVectors(t *testing.T) {
	for _, tc := range []struct {
		did  string
		want int64
	}{
		{"did:plc:abc", 6436504481215310422},
		{"did:plc:mbuadp4xzlbmc2ncqp3pmtox", -5881169076914402716}, // negative: the sign bit
	} {
		t.Run(tc.did, func(t *testing.T) {
			if got := pgstore.LockKey(pgstore.NamespaceDefault, tc.did); got != tc.want {
				t.Fatalf("LockKey = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestLockKeyMatchesSQL(t *testing.T) {
	pool := pgtest.Pool(t)
	for _, did := range []string{"did:plc:abc", "did:plc:mbuadp4xzlbmc2ncqp3pmtox", string(didA), "did:web:feed.bridge.test"} {
		var got int64
		err := pool.QueryRow(context.Background(),
			`SELECT ('x' || substr(encode(sha256(convert_to($1 || $2, 'UTF8')), 'hex'), 1, 16))::bit(64)::bigint`,
			pgstore.NamespaceDefault, did).Scan(&got)
		if err != nil {
			t.Fatal(err)
		}
		if want := pgstore.LockKey(pgstore.NamespaceDefault, did); got != want {
			t.Fatalf("%s: SQL %d, Go %d", did, got, want)
		}
	}
}

func TestLockConformance(t *testing.T) {
	identitytest.TestLock(t, func(t testing.TB, wait time.Duration) identity.Lock {
		return newLock(t, lockPool(t, 8), namespace(t), wait)
	})
}

func TestCacheStoreConformance(t *testing.T) {
	identitytest.TestCacheStore(t, func(t testing.TB) identity.CacheStore {
		s, err := pgstore.NewCacheStore(pgtest.Pool(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(context.Background()); err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestNewLockValidates(t *testing.T) {
	if _, err := pgstore.NewLock(nil, nil); err == nil {
		t.Fatal("nil pool accepted")
	}
	pool := lockPool(t, 1)
	if _, err := pgstore.NewLock(pool, &pgstore.LockConfig{LockTimeout: time.Second, StatementTimeout: time.Second}); err == nil {
		t.Fatal("statement_timeout <= lock_timeout accepted (contention would surface as 57014)")
	}
	l, err := pgstore.NewLock(pool, nil)
	if err != nil || l.Wait() != pgstore.LockTimeoutDefault {
		t.Fatalf("defaults: %v, wait %v", err, l.Wait())
	}
	if (*pgstore.Lock)(nil).Wait() != 0 {
		t.Fatal("nil lock has a wait")
	}
	if pc, _ := pgstore.LockPoolConfig(pgtest.LocalURL, 0); pc.MaxConns != 8 {
		t.Fatalf("default lock pool size = %d, want 8", pc.MaxConns)
	}
}

type env struct {
	res   *identitytest.Resolver
	store *identitytest.Store
	cache *pgstore.CacheStore
	ns    string
}

func newEnv(t *testing.T) *env {
	e := &env{res: identitytest.NewResolver(), store: identitytest.NewStore(), ns: namespace(t)}
	var err error
	if e.cache, err = pgstore.NewCacheStore(pgtest.Pool(t), nil); err != nil {
		t.Fatal(err)
	}
	if err := e.cache.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	e.store.Put(identity.Subject{DID: didA, Kind: identity.KindUser, Handle: "old.bridge.test", PDS: bridge})
	e.res.Set(identity.Identity{DID: didA, Handle: "new.bridge.test", DeclaredHandle: "new.bridge.test", PDS: bridge})
	return e
}

// refresher builds one "process": its own lock pool, cache wrapper and
// Refresher over the shared database.
func (e *env) refresher(t *testing.T, resolver identity.Resolver, wait time.Duration) (*identity.Refresher, *pgstore.Lock) {
	t.Helper()
	lock := newLock(t, lockPool(t, 8), e.ns, wait)
	cache, err := identity.NewCache(resolver, e.cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := identity.NewRefresher(resolver, e.store, &identity.RefresherConfig{Cache: cache, Lock: lock, TrustedHosts: []string{"pds.bridge.test"}})
	if err != nil {
		t.Fatal(err)
	}
	return r, lock
}

func TestContentionIsBusyAfterWait(t *testing.T) {
	e := newEnv(t)
	_, lockA := e.refresher(t, e.res, 5*time.Second)
	rB, _ := e.refresher(t, e.res, 300*time.Millisecond)
	release := identitytest.HoldLock(t, lockA, didA)
	defer release()

	err := rB.RefreshHandle(context.Background(), didA)
	if !errors.Is(err, identity.ErrBusy) || !errors.Is(err, identity.ErrDeferred) || !errors.Is(err, identity.ErrUnresolved) {
		t.Fatalf("err = %v, want busy, deferred, unresolved", err)
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
		t.Fatalf("err = %v, want SQLSTATE 55P03 underneath", err)
	}
	if e.store.Writes() != 0 {
		t.Fatal("busy refresh wrote")
	}
	release()
	if err := rB.RefreshHandle(context.Background(), didA); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

func TestTwoRefreshersAndStaleEventCannotRevert(t *testing.T) {
	e := newEnv(t)
	e.res.Set(identity.Identity{DID: didA, Handle: "mid.bridge.test", DeclaredHandle: "mid.bridge.test", PDS: bridge})
	stale := identitytest.NewStaleResolver(e.res)
	rA, _ := e.refresher(t, stale, 5*time.Second)
	rB, _ := e.refresher(t, e.res, 5*time.Second)

	var wg sync.WaitGroup
	var errA error
	wg.Go(func() { errA = rA.RefreshHandle(context.Background(), didA) })
	<-stale.Resolved // A has resolved "mid"; the rename happens now
	e.res.Set(identity.Identity{DID: didA, Handle: "new.bridge.test", DeclaredHandle: "new.bridge.test", PDS: bridge})
	if err := rB.RefreshHandle(context.Background(), didA); err != nil {
		t.Fatalf("B: %v", err)
	}
	close(stale.Release)
	wg.Wait()
	if errA != nil {
		t.Fatalf("A: %v", errA)
	}
	if err := rA.HandleIdentityEvent(context.Background(), identity.IdentityEvent{DID: string(didA), Handle: "mid.bridge.test"}); err != nil {
		t.Fatal(err)
	}
	row, _ := e.store.Row(didA)
	if row.Handle != "new.bridge.test" {
		t.Fatalf("handle reverted to %q", row.Handle)
	}
}

func TestNilLockFailsClosed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pool := lockPool(t, 1)
	for _, tc := range []struct {
		name string
		lock identity.Lock
	}{
		{"TypedNil", (*pgstore.Lock)(nil)},
		{"NonPositiveWait", newLock(t, pool, e.ns, -time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache, _ := identity.NewCache(e.res, e.cache, nil)
			if err := e.cache.Put(ctx, identity.CacheEntry{Identity: identity.Identity{DID: didA, Handle: "old.bridge.test"}, Expires: time.Now().Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			r, err := identity.NewRefresher(e.res, e.store, &identity.RefresherConfig{Cache: cache, Lock: tc.lock})
			if err != nil {
				t.Fatal(err)
			}
			if err := r.RefreshHandle(ctx, didA); !errors.Is(err, identity.ErrLockUnavailable) {
				t.Fatalf("err = %v, want ErrLockUnavailable", err)
			}
			if _, err := e.cache.Get(ctx, didA); err != nil {
				t.Fatalf("cache row purged before failing closed: %v", err)
			}
			if e.res.TotalCalls() != 0 || e.store.Writes() != 0 {
				t.Fatal("fail-closed refresh resolved or wrote")
			}
		})
	}
}

func TestSweepDryRunWritesNothing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	r, _ := e.refresher(t, e.res, 5*time.Second)
	if err := e.cache.Put(ctx, identity.CacheEntry{Identity: identity.Identity{DID: didA, Handle: "old.bridge.test"}, Expires: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	rep, err := r.Sweep(ctx, e.store, &identity.SweepOpts{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 || rep.Rows[0].Reason != identity.ReasonWouldUpdate || rep.AllMatched() {
		t.Fatalf("report = %+v", rep.Rows)
	}
	if got, err := e.cache.Get(ctx, didA); err != nil || got.Identity.Handle != "old.bridge.test" {
		t.Fatalf("cache touched by dry run: %+v, %v", got, err)
	}
	if e.store.Writes() != 0 {
		t.Fatal("dry run wrote")
	}
	// The real run with ClearCacheFirst then fixes it.
	rep, err = r.Sweep(ctx, e.store, &identity.SweepOpts{ClearCacheFirst: true})
	if err != nil || !rep.AllMatched() {
		t.Fatalf("real run: %v, %+v", err, rep.Rows)
	}
	if _, err := e.cache.Get(ctx, didA); !errors.Is(err, identity.ErrCacheMiss) {
		t.Fatalf("cache not cleared: %v", err)
	}
}

func TestUnlockFailureDiscardsConnection(t *testing.T) {
	ctx := context.Background()
	pool := lockPool(t, 2)
	ns := namespace(t)
	l := newLock(t, pool, ns, 5*time.Second)
	killer := pgtest.Pool(t)
	key := pgstore.LockKey(ns, string(didA))
	err := l.WithLock(ctx, didA, func(ctx context.Context) error {
		// Kill the session holding the lock, so the unlock cannot run.
		_, err := killer.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks
			WHERE locktype = 'advisory' AND granted
			AND ((classid::bigint << 32) | objid::bigint) = $1`, key)
		return err
	})
	if err == nil {
		t.Fatal("WithLock hid the failed unlock")
	}
	if n := pool.Stat().TotalConns(); n != 0 {
		t.Fatalf("pool kept %d connections, want the broken one discarded", n)
	}
	if err := l.WithLock(ctx, didA, func(context.Context) error { return nil }); err != nil {
		t.Fatalf("lock unusable afterwards: %v", err)
	}
}

func TestCacheStoreTableNames(t *testing.T) {
	pool := pgtest.Pool(t)
	ctx := context.Background()
	for _, bad := range []string{"a.b.c", "a..b", ".x", "x."} {
		if _, err := pgstore.NewCacheStore(pool, &pgstore.CacheConfig{Table: bad}); err == nil {
			t.Errorf("table %q accepted", bad)
		}
	}
	// Two tables in one schema each get their own unique handle index.
	for _, name := range []string{"cache_one", "Cache Two"} {
		s, err := pgstore.NewCacheStore(pool, &pgstore.CacheConfig{Table: name})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil { // idempotent
			t.Fatal(err)
		}
		e := identity.CacheEntry{Identity: identity.Identity{DID: didA, Handle: "a.bridge.test"}, Expires: time.Now().Add(time.Hour)}
		if err := s.Put(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE '%handle_key'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("handle indexes = %d, want 2", n)
	}
}
