package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/identity"
)

// Defaults for LockConfig.
const (
	// NamespaceDefault is Coves' key prefix, so Coves processes and ours
	// exclude each other on a shared database.
	NamespaceDefault = "coves/identity-refresh/"
	// LockTimeoutDefault is identity.LockWaitDefault.
	LockTimeoutDefault = identity.LockWaitDefault
	// StatementTimeoutMargin is added to LockTimeout for statement_timeout,
	// which must be larger so contention surfaces as 55P03, not 57014.
	StatementTimeoutMargin = 5 * time.Second
	// LockPoolSizeDefault caps the lock pool of an event consumer.
	LockPoolSizeDefault = 8
	// unlockTimeout bounds the unlock of a lock whose caller has gone.
	unlockTimeout = 5 * time.Second
)

// sqlstateLockNotAvailable is what lock_timeout raises.
const sqlstateLockNotAvailable = "55P03"

// LockConfig configures a Lock.
type LockConfig struct {
	// Namespace prefixes the DID before hashing. Defaults to NamespaceDefault.
	Namespace string
	// LockTimeout is how long an acquire waits (lock_timeout). Defaults to
	// LockTimeoutDefault.
	LockTimeout time.Duration
	// StatementTimeout bounds each lock statement (statement_timeout); it
	// must exceed LockTimeout. Defaults to LockTimeout + StatementTimeoutMargin.
	StatementTimeout time.Duration
}

// Lock is an identity.Lock holding a session-scoped pg_advisory_lock on a
// dedicated connection per acquire.
//
// Give it its own pool (see LockPoolConfig), never the application's: a
// waiter must not hold a connection the lock holder needs to finish, or a
// capped pool deadlocks. Session locks do not survive PgBouncer in
// transaction-pooling mode; connect it directly or through session pooling.
type Lock struct {
	pool *pgxpool.Pool
	cfg  LockConfig
}

var _ identity.Lock = (*Lock)(nil)

// LockPoolConfig parses connString into a pool config capped at maxConns
// (LockPoolSizeDefault when maxConns <= 0). An event consumer keeps the
// default 8; a sweep passes its concurrency. The caller creates and owns the
// pool.
func LockPoolConfig(connString string, maxConns int32) (*pgxpool.Config, error) {
	pc, err := pgxpool.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	if maxConns <= 0 {
		maxConns = LockPoolSizeDefault
	}
	pc.MaxConns = maxConns
	if pc.MinConns > maxConns {
		pc.MinConns = maxConns
	}
	return pc, nil
}

// NewLock returns a Lock on pool, which the caller owns. It does not connect.
func NewLock(pool *pgxpool.Pool, cfg *LockConfig) (*Lock, error) {
	if pool == nil {
		return nil, errors.New("pgstore: NewLock: nil pool")
	}
	l := &Lock{pool: pool}
	if cfg != nil {
		l.cfg = *cfg
	}
	if l.cfg.Namespace == "" {
		l.cfg.Namespace = NamespaceDefault
	}
	if l.cfg.LockTimeout == 0 {
		l.cfg.LockTimeout = LockTimeoutDefault
	}
	if l.cfg.StatementTimeout == 0 {
		l.cfg.StatementTimeout = l.cfg.LockTimeout + StatementTimeoutMargin
	}
	if l.cfg.LockTimeout > 0 && l.cfg.StatementTimeout <= l.cfg.LockTimeout {
		return nil, fmt.Errorf("pgstore: NewLock: StatementTimeout %s must exceed LockTimeout %s", l.cfg.StatementTimeout, l.cfg.LockTimeout)
	}
	return l, nil
}

// LockKey is the advisory-lock key of did: the first 8 bytes of
// sha256(namespace + did) as a big-endian signed integer. In SQL:
//
//	SELECT ('x' || substr(encode(sha256(convert_to($namespace || $did, 'UTF8')), 'hex'), 1, 16))::bit(64)::bigint
func LockKey(namespace, did string) int64 {
	sum := sha256.Sum256([]byte(namespace + did))
	return int64(binary.BigEndian.Uint64(sum[:8]))
}

// Wait implements identity.Lock. A nil Lock or a non-positive LockTimeout
// waits 0, which makes the Refresher fail closed.
func (l *Lock) Wait() time.Duration {
	if l == nil || l.pool == nil {
		return 0
	}
	return max(l.cfg.LockTimeout, 0)
}

func millis(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }

// WithLock implements identity.Lock. Contention past LockTimeout is SQLSTATE
// 55P03, returned as an error matching identity.ErrLockBusy. The unlock runs
// on the same connection; a connection whose unlock fails, or whose lock
// state is unknown, is closed rather than returned to the pool.
func (l *Lock) WithLock(ctx context.Context, did identity.DID, fn func(context.Context) error) (err error) {
	if l.Wait() <= 0 {
		return identity.ErrLockUnavailable
	}
	key := LockKey(l.cfg.Namespace, string(did))
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: acquire lock connection: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT set_config('lock_timeout', $1, false), set_config('statement_timeout', $2, false)",
		millis(l.cfg.LockTimeout), millis(l.cfg.StatementTimeout)); err != nil {
		discard(conn)
		return fmt.Errorf("pgstore: set lock timeouts: %w", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && pgErr.Code == sqlstateLockNotAvailable {
			conn.Release()
			return fmt.Errorf("%w: %s: %w", identity.ErrLockBusy, did, err)
		}
		// A cancelled acquire may still have been granted server-side:
		// closing the session is the only sure release.
		discard(conn)
		return fmt.Errorf("pgstore: pg_advisory_lock: %w", err)
	}
	// The lock lives as long as its session. While fn runs, a watcher reads
	// the idle connection: a server that restarts or a session that is
	// terminated closes it at once, and fn's context is cancelled, so fn's
	// writes (which take that context) fail rather than go out unguarded.
	fctx, lose := context.WithCancelCause(ctx)
	defer lose(nil)
	lost := watchSession(conn, did, lose)
	defer func() {
		if lerr := lost(); lerr != nil {
			discard(conn)
			if err == nil {
				err = lerr
			}
			return
		}
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
		defer cancel()
		var released bool
		if uerr := conn.QueryRow(uctx, "SELECT pg_advisory_unlock($1)", key).Scan(&released); uerr != nil || !released {
			discard(conn)
			if err == nil {
				err = fmt.Errorf("pgstore: pg_advisory_unlock failed (connection discarded): %v", uerr)
			}
			return
		}
		conn.Release()
	}()
	return fn(fctx)
}

// ErrLockLost is returned by WithLock when the session holding the lock
// ended while fn ran (the server restarted, or the session was
// terminated): the lock was gone from then on, so fn's context was
// cancelled and fn's result is not trusted. The Refresher reports it as an
// unresolved refresh, retried with the next event.
var ErrLockLost = errors.New("pgstore: lock lost with its session")

// watchSession reads conn until the returned stop is called or the
// connection fails; on failure it calls lose. stop waits for the watcher
// and returns ErrLockLost if the session had ended. The connection is idle
// while fn runs, so the read sees only the session's end (or a notice,
// which it passes over).
func watchSession(conn *pgxpool.Conn, did identity.DID, lose context.CancelCauseFunc) (stop func() error) {
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := conn.Conn().PgConn().WaitForNotification(wctx)
		if wctx.Err() != nil {
			done <- nil // stopped: the session is fine
			return
		}
		lerr := fmt.Errorf("%w: %s: %v", ErrLockLost, did, err)
		lose(lerr)
		done <- lerr
	}()
	return func() error {
		cancel()
		return <-done
	}
}

// discard closes conn's session instead of returning it to the pool.
func discard(conn *pgxpool.Conn) {
	c := conn.Hijack()
	ctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
	defer cancel()
	_ = c.Close(ctx)
}
