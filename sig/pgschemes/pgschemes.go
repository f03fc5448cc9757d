// Package pgschemes is a sig.LearnedSchemeStore in PostgreSQL: the scheme
// each host accepted and when, shared by every process using the same
// database and kept across restarts.
//
//	pool, _ := pgxpool.New(ctx, dsn) // the caller's
//	st, _ := pgschemes.New(pool, nil)
//	_ = st.Migrate(ctx) // CREATE TABLE IF NOT EXISTS, or apply Schema() yourself
//	cfg := deliver.DefaultConfig()
//	cfg.Schemes = st
//
// One row per host: host, scheme (its text), learned (the caller's clock;
// NULL when told through SetScheme, which has no time).
package pgschemes

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/sig"
)

// TableDefault is the table's name.
const TableDefault = "fedkit_schemes"

// Config configures a Store. The zero value is usable.
type Config struct {
	// Table names the table, optionally schema-qualified; lower-case
	// letters, digits, underscores and one dot. Defaults to TableDefault
	// (in the connection's search_path).
	Table string
}

// Errors.
var (
	// ErrPostgres wraps every error from the database.
	ErrPostgres = errors.New("pgschemes: postgres failed")
	// ErrInvalidConfig is returned by New for a nil pool or a bad Table.
	ErrInvalidConfig = errors.New("pgschemes: invalid config")
	// ErrCorrupt is returned when a stored value cannot be read back.
	ErrCorrupt = errors.New("pgschemes: stored value unreadable")
)

var tableName = regexp.MustCompile(`^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)?$`)

var _ sig.LearnedSchemeStore = (*Store)(nil)

// Store is a sig.LearnedSchemeStore in PostgreSQL, safe for concurrent use.
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
	scheme text NOT NULL,
	learned timestamptz
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

// Scheme implements sig.SchemeStore.
func (s *Store) Scheme(ctx context.Context, host string) (sig.Scheme, bool, error) {
	l, ok, err := s.Learned(ctx, host)
	return l.Scheme, ok, err
}

// SetScheme implements sig.SchemeStore: the time learned is kept when sc
// is the scheme remembered, and NULL when it changes.
func (s *Store) SetScheme(ctx context.Context, host string, sc sig.Scheme) error {
	text, err := sc.MarshalText()
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO `+s.table+` AS t (host, scheme, learned) VALUES ($1, $2, NULL)
ON CONFLICT (host) DO UPDATE SET scheme = excluded.scheme,
	learned = CASE WHEN t.scheme = excluded.scheme THEN t.learned END`, host, string(text))
	return wrap(err)
}

// Learned implements sig.LearnedSchemeStore.
func (s *Store) Learned(ctx context.Context, host string) (sig.LearnedScheme, bool, error) {
	var text string
	var learned *time.Time
	err := s.pool.QueryRow(ctx, `SELECT scheme, learned FROM `+s.table+` WHERE host = $1`, host).Scan(&text, &learned)
	if errors.Is(err, pgx.ErrNoRows) {
		return sig.LearnedScheme{}, false, nil
	}
	if err != nil {
		return sig.LearnedScheme{}, false, wrap(err)
	}
	var l sig.LearnedScheme
	if err := l.Scheme.UnmarshalText([]byte(text)); err != nil {
		return sig.LearnedScheme{}, false, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if learned != nil {
		l.Learned = learned.UTC()
	}
	return l, true, nil
}

// Learn implements sig.LearnedSchemeStore.
func (s *Store) Learn(ctx context.Context, host string, l sig.LearnedScheme) error {
	text, err := l.Scheme.MarshalText()
	if err != nil {
		return err
	}
	var learned *time.Time
	if !l.Learned.IsZero() {
		learned = &l.Learned
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO `+s.table+` (host, scheme, learned) VALUES ($1, $2, $3)
ON CONFLICT (host) DO UPDATE SET scheme = excluded.scheme, learned = excluded.learned`, host, string(text), learned)
	return wrap(err)
}
