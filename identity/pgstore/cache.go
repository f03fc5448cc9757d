package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/identity"
)

// CacheTableDefault is the cache table's name.
const CacheTableDefault = "identity_cache"

// CacheConfig configures a CacheStore.
type CacheConfig struct {
	// Table names the cache table, optionally schema-qualified as
	// "schema.table". Defaults to CacheTableDefault.
	Table string
}

// CacheStore is an identity.CacheStore in a Postgres table, shared by every
// process of a multi-process application. Create the table with Migrate.
type CacheStore struct {
	pool  *pgxpool.Pool
	table string // quoted identifier
	index string // quoted index name, derived from the table's
}

var (
	_ identity.CacheStore   = (*CacheStore)(nil)
	_ identity.CacheClearer = (*CacheStore)(nil)
)

// NewCacheStore returns a CacheStore on pool, which the caller owns. It does
// not connect.
func NewCacheStore(pool *pgxpool.Pool, cfg *CacheConfig) (*CacheStore, error) {
	if pool == nil {
		return nil, errors.New("pgstore: NewCacheStore: nil pool")
	}
	name := CacheTableDefault
	if cfg != nil && cfg.Table != "" {
		name = cfg.Table
	}
	var ident pgx.Identifier
	for part := range splitDot(name) {
		if part == "" {
			return nil, fmt.Errorf("pgstore: bad table name %q", name)
		}
		ident = append(ident, part)
	}
	if len(ident) > 2 {
		return nil, fmt.Errorf("pgstore: bad table name %q", name)
	}
	// The index lives in the table's schema; naming it after the table keeps
	// two cache tables in one schema from sharing (and skipping) an index.
	index := pgx.Identifier{ident[len(ident)-1] + "_handle_key"}.Sanitize()
	return &CacheStore{pool: pool, table: ident.Sanitize(), index: index}, nil
}

func splitDot(s string) func(func(string) bool) {
	return func(yield func(string) bool) {
		start := 0
		for i := 0; i <= len(s); i++ {
			if i == len(s) || s[i] == '.' {
				if !yield(s[start:i]) {
					return
				}
				start = i + 1
			}
		}
	}
}

// Migrate creates the cache table and its handle index if missing.
func (s *CacheStore) Migrate(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+s.table+` (
	did             text PRIMARY KEY,
	handle          text,
	declared_handle text NOT NULL DEFAULT '',
	pds             text NOT NULL DEFAULT '',
	signing_key     text NOT NULL DEFAULT '',
	resolved_at     timestamptz NOT NULL,
	expires_at      timestamptz NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS `+s.index+` ON `+s.table+` (handle)`)
	return mapErr(err)
}

const cacheCols = `did, coalesce(handle, ''), declared_handle, pds, signing_key, resolved_at, expires_at`

func scanEntry(row pgx.Row) (identity.CacheEntry, error) {
	var (
		e                     identity.CacheEntry
		did, handle, declared string
		resolvedAt, expiresAt time.Time
	)
	err := row.Scan(&did, &handle, &declared, &e.Identity.PDS, &e.Identity.SigningKey, &resolvedAt, &expiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return identity.CacheEntry{}, identity.ErrCacheMiss
	}
	if err != nil {
		return identity.CacheEntry{}, mapErr(err)
	}
	e.Identity.DID = identity.DID(did)
	e.Identity.Handle = identity.Handle(handle)
	e.Identity.DeclaredHandle = identity.Handle(declared)
	e.Identity.ResolvedAt = resolvedAt
	e.Expires = expiresAt
	return e, nil
}

// Get implements identity.CacheStore.
func (s *CacheStore) Get(ctx context.Context, did identity.DID) (identity.CacheEntry, error) {
	return scanEntry(s.pool.QueryRow(ctx, `SELECT `+cacheCols+` FROM `+s.table+` WHERE did = $1`, string(did)))
}

// GetByHandle implements identity.CacheStore.
func (s *CacheStore) GetByHandle(ctx context.Context, h identity.Handle) (identity.CacheEntry, error) {
	if h.IsZero() {
		return identity.CacheEntry{}, identity.ErrCacheMiss
	}
	return scanEntry(s.pool.QueryRow(ctx, `SELECT `+cacheCols+` FROM `+s.table+` WHERE handle = $1`, string(h)))
}

// Put implements identity.CacheStore.
func (s *CacheStore) Put(ctx context.Context, e identity.CacheEntry) error {
	id := e.Identity
	var handle *string
	if !id.Handle.IsZero() {
		v := string(id.Handle)
		handle = &v
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// A handle maps to one DID: the newest claim wins.
		if handle != nil {
			if _, err := tx.Exec(ctx, `DELETE FROM `+s.table+` WHERE handle = $1 AND did <> $2`, *handle, string(id.DID)); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO `+s.table+` (did, handle, declared_handle, pds, signing_key, resolved_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (did) DO UPDATE SET handle = EXCLUDED.handle, declared_handle = EXCLUDED.declared_handle,
	pds = EXCLUDED.pds, signing_key = EXCLUDED.signing_key, resolved_at = EXCLUDED.resolved_at,
	expires_at = EXCLUDED.expires_at`,
			string(id.DID), handle, string(id.DeclaredHandle), id.PDS, id.SigningKey, id.ResolvedAt, e.Expires)
		return err
	})
	return mapErr(err)
}

// Delete implements identity.CacheStore.
func (s *CacheStore) Delete(ctx context.Context, did identity.DID) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM `+s.table+` WHERE did = $1`, string(did))
	return mapErr(err)
}

// DeleteHandle implements identity.CacheStore.
func (s *CacheStore) DeleteHandle(ctx context.Context, h identity.Handle) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM `+s.table+` WHERE handle = $1`, string(h))
	return mapErr(err)
}

// Clear implements identity.CacheClearer.
func (s *CacheStore) Clear(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM `+s.table)
	return mapErr(err)
}

// ErrDatabase wraps every driver error a CacheStore returns.
var ErrDatabase = errors.New("pgstore: database error")

// mapErr is the one place driver errors become this package's errors.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrDatabase, err)
}
