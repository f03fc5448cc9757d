// Package store keeps the relay's subscribers: FileStore, an atomically
// rewritten JSON file that needs no server (the default), and in package
// pgstore the same on Postgres for several relay processes.
//
//	s, err := store.OpenFile("data/subscribers.json")
//	err = s.Put(ctx, store.Subscriber{Actor: a, Inbox: inbox, Style: store.StyleMastodon, State: store.StateActive})
//	subs, err := s.List(ctx)
//
// TestStore is the conformance suite both pass.
//
// Clocks: Subscriber.Since is the relay's time, stored as given by both
// backends; neither compares a stored time with a server clock.
package store
