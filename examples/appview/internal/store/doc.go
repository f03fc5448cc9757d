// Package store is the AppView's Postgres layer: embedded migrations, the
// users, communities and posts tables, the Jetstream cursor and the redrive
// queue. It takes a pool the caller owns and never dials.
//
// Usage:
//
//	if _, err := store.Migrate(ctx, pool); err != nil { ... }
//	s := store.New(pool)
//	a, err := s.ActorByDID(ctx, did)
//
// Origin columns follow the design's convention: NULL is untouched, the
// empty string is cleared; filter on COALESCE(col, the empty string) being
// non-empty, never on IS NOT NULL. Migrations are
// embedded files migrations/NNNN_name.sql, applied once each and recorded
// in schema_migrations.
//
// Clocks, one per rule: the redrive queue's next_at and dead_at are the
// caller's (the ingest's Config.Now, passed to Enqueue, ClaimDue,
// Reschedule and PurgeDead), never the database's now(); posts.created_at
// is the record's own. updated_at, created_at and indexed_at on the users,
// communities and cursor tables take the server's now() and are
// informational: no statement compares them with a caller's time.
package store
