// Package ingest turns Jetstream events into AppView writes: identity
// events through the identity library's Refresher, account events through
// the seq guard, profile commits through origin admission, posts into the
// author index. Every result is classified done, permanent, unresolved or
// busy; the last two go to the redrive table.
//
// Usage:
//
//	in, err := ingest.New(ingest.Deps{Store: st, Refresher: ref, Admitter: adm, Resolver: res}, nil)
//	consumer, err := jetstream.New(st, in.Handle, cfg)
//	go in.RunRedriver(ctx, ingest.RedriveIntervalDefault, laneRunner)
package ingest
