package pgstore

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PruneEveryDefault is how many Marks pass between two deletions of the
// expired marks.
const PruneEveryDefault = 1000

const seenSchema = `
CREATE TABLE IF NOT EXISTS relay_seen (
    key     text        PRIMARY KEY,
    expires timestamptz NOT NULL
)`

// Seen is the relay's seen-set (relay.SeenSet) in Postgres, for a
// deployment without Redis: every process sharing the database shares the
// marks. Windows are measured by the database's clock. Expired marks are
// deleted every PruneEveryDefault Marks, so the table holds about one
// window's worth of activities. Store.Migrate creates its table.
type Seen struct {
	pool  *pgxpool.Pool
	marks atomic.Int64
}

// NewSeen returns a Seen on pool; it does not connect.
func NewSeen(pool *pgxpool.Pool) *Seen { return &Seen{pool: pool} }

// Mark records key for window and reports whether it was new: inserted, or
// found expired and renewed, in one statement, so of concurrent Marks one
// wins.
func (s *Seen) Mark(ctx context.Context, key string, window time.Duration) (bool, error) {
	if s.marks.Add(1)%PruneEveryDefault == 0 {
		// A failed prune is retried a thousand Marks later; the Mark
		// below says whether the database is there.
		_, _ = s.pool.Exec(ctx, `DELETE FROM relay_seen WHERE expires <= now()`)
	}
	var one int
	err := s.pool.QueryRow(ctx, `
INSERT INTO relay_seen (key, expires) VALUES ($1, now() + make_interval(secs => $2))
ON CONFLICT (key) DO UPDATE SET expires = EXCLUDED.expires WHERE relay_seen.expires <= now()
RETURNING 1`, key, window.Seconds()).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, wrap(err)
}

// Has reports whether key is marked and within its window.
func (s *Seen) Has(ctx context.Context, key string) (bool, error) {
	var has bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM relay_seen WHERE key = $1 AND expires > now())`, key).Scan(&has)
	return has, wrap(err)
}

// Forget removes key.
func (s *Seen) Forget(ctx context.Context, key string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM relay_seen WHERE key = $1`, key)
	return wrap(err)
}
