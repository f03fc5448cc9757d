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
package store
