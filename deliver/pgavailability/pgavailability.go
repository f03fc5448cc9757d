// Package pgavailability is a driver.AvailabilityStore in PostgreSQL,
// shared by every process using the same database.
//
//	pool, _ := pgxpool.New(ctx, dsn) // the caller's
//	st, _ := pgavailability.New(pool, nil)
//	_ = st.Migrate(ctx) // CREATE TABLE IF NOT EXISTS, or apply Schema() yourself
//	cfg := deliver.DefaultConfig()
//	cfg.Availability.Store = st
//
// One row per failing host: its failure days (UTC days since 1970 of the
// caller's clock, the latest rule.Days kept) and, once unavailable, since
// (the caller's clock). A success deletes the row, so the table holds only
// hosts failing now; Prune drops those whose last failure is old.
package pgavailability

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/deliver/driver"
)

// TableDefault is the table's name.
const TableDefault = "fedkit_availability"

// Config configures a Store. The zero value is usable.
type Config struct {
	// Table names the table, optionally schema-qualified; lower-case
	// letters, digits, underscores and one dot. Defaults to TableDefault.
	Table string
}

// Errors.
var (
	// ErrPostgres wraps every error from the database.
	ErrPostgres = errors.New("pgavailability: postgres failed")
	// ErrInvalidConfig is returned by New for a nil pool or a bad Table.
	ErrInvalidConfig = errors.New("pgavailability: invalid config")
)

var tableName = regexp.MustCompile(`^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$`)

var _ driver.AvailabilityStore = (*Store)(nil)

// Store is a driver.AvailabilityStore in PostgreSQL, safe for concurrent
// use.
type Store struct {
	pool  *pgxpool.Pool
	table string
}

// New returns a Store over pool, which the caller owns. It does not dial.
func New(pool *pgxpool.Pool, cfg *Config) (*Store, error) {
	if pool == nil {
		return nil, fmt.Errorf("%w: nil pool", ErrInvalidConfig)
	}
	s := &Store{pool: pool, table: TableDefault}
	if cfg != nil && cfg.Table != "" {
		s.table = cfg.Table
	}
	if !tableName.MatchString(s.table) {
		return nil, fmt.Errorf("%w: table %q", ErrInvalidConfig, s.table)
	}
	return s, nil
}

// Schema returns the SQL Migrate applies.
func (s *Store) Schema() string {
	return `CREATE TABLE IF NOT EXISTS ` + s.table + ` (
	host text PRIMARY KEY,
	days bigint[] NOT NULL,
	last_failure timestamptz NOT NULL,
	since timestamptz
)`
}

// Migrate creates the table if it does not exist.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, s.Schema())
	return wrap(err)
}

// wrap maps driver errors to the package's.
func wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrPostgres, err)
}

// Failure implements driver.AvailabilityStore, in one statement: the row
// lock of ON CONFLICT makes concurrent failures of a day count once.
func (s *Store) Failure(ctx context.Context, host string, now time.Time, rule driver.AvailabilityRule) (time.Time, bool, error) {
	days := max(rule.Days, 1)
	var since *time.Time
	err := s.pool.QueryRow(ctx, `INSERT INTO `+s.table+` AS t (host, days, last_failure, since)
VALUES ($1, ARRAY[$2::bigint], $4, CASE WHEN $3::int <= 1 THEN $4::timestamptz END)
ON CONFLICT (host) DO UPDATE SET
	days = CASE WHEN t.since IS NOT NULL OR $2::bigint = ANY(t.days) THEN t.days
		ELSE (t.days || $2::bigint)[greatest(1, cardinality(t.days) + 2 - $3::int):] END,
	last_failure = greatest(t.last_failure, $4::timestamptz),
	since = COALESCE(t.since, CASE WHEN NOT ($2::bigint = ANY(t.days)) AND cardinality(t.days) + 1 >= $3::int THEN $4::timestamptz END)
RETURNING since`, host, now.Unix()/86400, days, now).Scan(&since)
	if err != nil {
		return time.Time{}, false, wrap(err)
	}
	if since == nil {
		return time.Time{}, false, nil
	}
	return since.UTC(), true, nil
}

// SeenAlive implements driver.AvailabilityStore.
func (s *Store) SeenAlive(ctx context.Context, host string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM `+s.table+` WHERE host = $1`, host)
	return wrap(err)
}

// Unavailable implements driver.AvailabilityStore.
func (s *Store) Unavailable(ctx context.Context, host string) (time.Time, bool, error) {
	var since time.Time
	err := s.pool.QueryRow(ctx, `SELECT since FROM `+s.table+` WHERE host = $1 AND since IS NOT NULL`, host).Scan(&since)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, wrap(err)
	}
	return since.UTC(), true, nil
}

// ListUnavailable implements driver.AvailabilityStore.
func (s *Store) ListUnavailable(ctx context.Context) ([]driver.UnavailableHost, error) {
	rows, err := s.pool.Query(ctx, `SELECT host, since FROM `+s.table+` WHERE since IS NOT NULL ORDER BY since, host`)
	if err != nil {
		return nil, wrap(err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (driver.UnavailableHost, error) {
		var u driver.UnavailableHost
		err := r.Scan(&u.Host, &u.Since)
		u.Since = u.Since.UTC()
		return u, err
	})
	return out, wrap(err)
}

// Prune deletes hosts still available whose last failure is before
// before (the caller's clock), and returns how many: a host that failed a
// few days and then was never delivered to again.
func (s *Store) Prune(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM `+s.table+` WHERE since IS NULL AND last_failure < $1`, before)
	return tag.RowsAffected(), wrap(err)
}
