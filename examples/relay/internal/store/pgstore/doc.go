// Package pgstore keeps the relay's subscribers in Postgres, so several relay
// processes (servers and workers) share one list.
//
//	s := pgstore.New(pool) // pool owned by the caller
//	if err := s.Migrate(ctx); err != nil { ... }
package pgstore
