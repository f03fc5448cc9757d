package pgqueue

import "context"

// MigrateTo applies migrations up to version, as an earlier release would.
func (q *Queue) MigrateTo(ctx context.Context, version int) error { return q.migrateTo(ctx, version) }

// Table returns the schema-qualified name of one of the queue's tables.
func (q *Queue) Table(name string) string { return q.qualified + name }

// Channel returns the LISTEN/NOTIFY channel as Enqueue and Notify name it
// on q's pool.
func (q *Queue) Channel(ctx context.Context) (string, error) {
	var c string
	err := q.pool.QueryRow(ctx, "SELECT "+q.channelSQL(), q.channel).Scan(&c)
	return c, err
}
