// Package pgstore is the Postgres backend of identity: a per-DID refresh
// Lock built on session-scoped pg_advisory_lock, and a CacheStore table a
// multi-process application shares.
//
// Pools are the caller's. Give the Lock a pool of its own, capped at 8
// (LockPoolConfig); a sweep sizes its own to its concurrency. Lock waiters
// must never share a capped pool with the writes that release them.
//
//	pc, _ := pgstore.LockPoolConfig(connString, pgstore.LockPoolSizeDefault)
//	lockPool, _ := pgxpool.NewWithConfig(ctx, pc)
//	lock, _ := pgstore.NewLock(lockPool, nil) // lock_timeout 25 s, statement_timeout 30 s
//	cache, _ := pgstore.NewCacheStore(appPool, nil)
//	_ = cache.Migrate(ctx)
//
// The lock key is the first 8 bytes of sha256(Namespace + did), read as a
// big-endian signed integer; the default namespace is Coves', so Coves
// processes and ours exclude each other. Contention past LockTimeout is
// SQLSTATE 55P03, returned as identity.ErrLockBusy. Session locks do not
// work behind PgBouncer in transaction-pooling mode: connect directly or
// use session pooling.
//
// A lock lives as long as its session. If the session ends while the
// locked work runs (the server restarted or failed over, the backend was
// terminated), WithLock cancels the work's context at once and returns
// ErrLockLost: a refresh fails closed, writing nothing through that
// context, and the next event for the DID takes the lock afresh.
//
// Clocks: the cache table's resolved_at and expires_at are the caller's
// times (identity.CacheEntry, stamped by the Cache's Config.Now); the table
// stores them as given and never compares them with the database's now(),
// so whether an entry is stale is decided by the caller's clock alone. The
// lock takes no time at all: LockTimeout and StatementTimeout are
// durations the server measures.
package pgstore
