// Package jetstream consumes a Jetstream v1 /subscribe firehose over
// WebSocket: it parses frames, runs each DID's events in order on one of N
// lanes, and advances a durable cursor only past events fully handled.
//
// Usage:
//
//	c, err := jetstream.New(cursors, handler, &jetstream.Config{URL: "ws://localhost:6008/subscribe"})
//	if err != nil { ... }
//	err = c.Run(ctx) // reconnects with backoff until ctx ends
//
// Ordering: one DID's events run in arrival order on one lane; lanes run in
// parallel. The cursor (time_us) is saved only up to the oldest event not
// yet handled, so a restart replays at most the events in flight; a
// reconnect within the process resumes exactly after the last frame taken.
package jetstream
