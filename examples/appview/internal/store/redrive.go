package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// RedriveRow is one event waiting to be retried.
type RedriveRow struct {
	ID        int64
	DID       string
	TimeUS    int64
	Kind      string
	Event     json.RawMessage
	Attempts  int
	LastError string
}

// Enqueue stores an event for a later retry. attempts is the number of
// attempts already spent (0 for a deferred event). A replay of the same
// event (same DID and time_us) is ignored, so a crash between enqueue and
// cursor save cannot queue it twice.
func (s *Store) Enqueue(ctx context.Context, did string, timeUS int64, kind string, event []byte, attempts int, nextAt time.Time, code string) error {
	_, err := s.db.Exec(ctx, `INSERT INTO redrive (did, time_us, kind, event, attempts, next_at, last_error)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (did, time_us) DO NOTHING`,
		did, timeUS, kind, event, attempts, nextAt, code)
	if err != nil {
		return fmt.Errorf("store: enqueue redrive: %w", err)
	}
	return nil
}

// ClaimDue returns up to limit live rows due at now (the caller's clock) and
// pushes their next_at forward by lease, so a concurrent redriver does not
// take them too.
func (s *Store) ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]RedriveRow, error) {
	rows, err := s.db.Query(ctx, `UPDATE redrive SET next_at = $2 WHERE id IN (
			SELECT id FROM redrive WHERE dead_at IS NULL AND next_at <= $1
			ORDER BY time_us, id LIMIT $3 FOR UPDATE SKIP LOCKED)
		RETURNING id, did, time_us, kind, event, attempts, last_error`, now, now.Add(lease), limit)
	if err != nil {
		return nil, fmt.Errorf("store: claim redrive: %w", err)
	}
	defer rows.Close()
	var out []RedriveRow
	for rows.Next() {
		var r RedriveRow
		if err := rows.Scan(&r.ID, &r.DID, &r.TimeUS, &r.Kind, &r.Event, &r.Attempts, &r.LastError); err != nil {
			return nil, fmt.Errorf("store: claim redrive: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: claim redrive: %w", err)
	}
	// Keep replay order per DID: time_us order is Jetstream order.
	return out, nil
}

// Retire deletes a row whose event is done or permanently failed.
func (s *Store) Retire(ctx context.Context, id int64) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM redrive WHERE id = $1`, id); err != nil {
		return fmt.Errorf("store: retire redrive: %w", err)
	}
	return nil
}

// Reschedule sets the next attempt time and records the error code.
// spend adds one to attempts; when that reaches maxAttempts the row is
// marked dead at now instead. It reports whether the row died. now is the
// caller's clock, the one PurgeDead is given: dead_at never takes the
// database's now(), so retention is judged by one clock.
func (s *Store) Reschedule(ctx context.Context, id int64, now, nextAt time.Time, code string, spend bool, maxAttempts int) (bool, error) {
	inc := 0
	if spend {
		inc = 1
	}
	var dead bool
	err := s.db.QueryRow(ctx, `UPDATE redrive SET attempts = attempts + $2, next_at = $3, last_error = $4,
			dead_at = CASE WHEN attempts + $2 >= $5 THEN $6::timestamptz ELSE NULL END
		WHERE id = $1 RETURNING dead_at IS NOT NULL`, id, inc, nextAt, code, maxAttempts, now).Scan(&dead)
	if err != nil {
		return false, fmt.Errorf("store: reschedule redrive: %w", err)
	}
	return dead, nil
}

// RedriveStats counts live and dead rows.
func (s *Store) RedriveStats(ctx context.Context) (live, dead int, err error) {
	err = s.db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE dead_at IS NULL), count(*) FILTER (WHERE dead_at IS NOT NULL) FROM redrive`).Scan(&live, &dead)
	if err != nil {
		return 0, 0, fmt.Errorf("store: redrive stats: %w", err)
	}
	return live, dead, nil
}

// PurgeDead deletes dead rows that died more than keep before now, the
// caller's clock (the one Reschedule wrote dead_at with).
func (s *Store) PurgeDead(ctx context.Context, now time.Time, keep time.Duration) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM redrive WHERE dead_at IS NOT NULL AND dead_at < $1`, now.Add(-keep)); err != nil {
		return fmt.Errorf("store: purge dead redrive: %w", err)
	}
	return nil
}
