// Package ingest turns Jetstream events into AppView writes: identity
// events through the identity library's Refresher, account events through
// the seq guard, profile commits through origin admission, posts into the
// author index; community profiles through the community origin rule and a
// hosted-by check (HostedBy, ValidateCommunityHandle). Every result is
// classified done, permanent, unresolved, busy or transient; a transient
// failure is retried in-line (200 ms, 1 s, 3 s) first, and the last four
// go to the redrive table, each class with its own attempt budget.
//
// Every DID resolution is bounded by the identity resolve timeout (5 s, as
// the refresh), and a profile event of an unknown DID resolves it once: the
// new row is made from the resolution admission made (Decision.Resolution),
// or from one made by create when admission had nothing to resolve.
//
// Usage:
//
//	in, err := ingest.New(ingest.Deps{Store: st, Refresher: ref, Admitter: adm, Resolver: res,
//		HostedBy: ingest.HostedBy{Resolver: cachingResolver}}, nil)
//	consumer, err := jetstream.New(st, in.Handle, cfg)
//	go in.RunRedriver(ctx, ingest.RedriveIntervalDefault, laneRunner)
package ingest
