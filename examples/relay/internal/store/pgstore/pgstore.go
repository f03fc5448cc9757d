package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/examples/relay/internal/store"
)

// Store is a store.Store on Postgres.
type Store struct {
	pool *pgxpool.Pool
}

var _ store.Store = (*Store)(nil)

// New returns a Store on pool; it does not connect.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

const schema = `
CREATE TABLE IF NOT EXISTS relay_subscribers (
    actor     text        PRIMARY KEY,
    inbox     text        NOT NULL,
    host      text        NOT NULL DEFAULT '',
    style     text        NOT NULL,
    follow_id text        NOT NULL DEFAULT '',
    state     text        NOT NULL,
    since     timestamptz NOT NULL
)`

// Migrate creates the subscribers' table and Seen's if they are missing;
// safe on every start.
func (s *Store) Migrate(ctx context.Context) error {
	// An advisory lock keeps servers and workers starting together from
	// racing on CREATE TABLE IF NOT EXISTS (which is not concurrency-safe).
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(7465727)`); err != nil {
			return wrap(err)
		}
		if _, err := tx.Exec(ctx, schema); err != nil {
			return wrap(err)
		}
		_, err := tx.Exec(ctx, seenSchema)
		return wrap(err)
	})
}

// Put implements store.Store.
func (s *Store) Put(ctx context.Context, sub store.Subscriber) error {
	if err := sub.Validate(); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `
INSERT INTO relay_subscribers (actor, inbox, host, style, follow_id, state, since)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (actor) DO UPDATE SET inbox = $2, host = $3, style = $4, follow_id = $5, state = $6, since = $7`,
		sub.Actor, sub.Inbox, sub.Host, string(sub.Style), sub.FollowID, string(sub.State), sub.Since)
	return wrap(err)
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, actor string) (store.Subscriber, bool, error) {
	rows, err := s.pool.Query(ctx, selectCols+` WHERE actor = $1`, actor)
	if err != nil {
		return store.Subscriber{}, false, wrap(err)
	}
	subs, err := collect(rows)
	if err != nil || len(subs) == 0 {
		return store.Subscriber{}, false, err
	}
	return subs[0], true, nil
}

// Delete implements store.Store.
func (s *Store) Delete(ctx context.Context, actor string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM relay_subscribers WHERE actor = $1`, actor)
	if err != nil {
		return false, wrap(err)
	}
	return tag.RowsAffected() > 0, nil
}

// List implements store.Store.
func (s *Store) List(ctx context.Context) ([]store.Subscriber, error) {
	rows, err := s.pool.Query(ctx, selectCols+` ORDER BY actor`)
	if err != nil {
		return nil, wrap(err)
	}
	return collect(rows)
}

const selectCols = `SELECT actor, inbox, host, style, follow_id, state, since FROM relay_subscribers`

func collect(rows pgx.Rows) ([]store.Subscriber, error) {
	subs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Subscriber, error) {
		var sub store.Subscriber
		var style, state string
		err := r.Scan(&sub.Actor, &sub.Inbox, &sub.Host, &style, &sub.FollowID, &state, &sub.Since)
		sub.Style, sub.State = store.Style(style), store.State(state)
		sub.Since = sub.Since.UTC()
		return sub, err
	})
	return subs, wrap(err)
}

// ErrPostgres wraps every database failure.
var ErrPostgres = errors.New("pgstore: postgres")

func wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrPostgres, err)
}
