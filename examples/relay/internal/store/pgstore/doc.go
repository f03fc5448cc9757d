// Package pgstore keeps the relay's subscribers in Postgres, so several relay
// processes (servers and workers) share one list, and Seen, the relay's
// seen-set for a deployment without Redis.
//
//	s := pgstore.New(pool) // pool owned by the caller
//	if err := s.Migrate(ctx); err != nil { ... }
//	seen := pgstore.NewSeen(pool) // a relay.SeenSet
package pgstore
