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
// parallel. The cursor (time_us) means every event at or before it is
// handled: it stops before the oldest event not yet handled, and before a
// time_us that event shares with others (Jetstream stamps time_us from its
// clock, so events can share one). A restart replays at most the events in
// flight; a reconnect within the process resumes exactly after the last
// frame read, skipping the replayed events it already read, not every
// event at the cursor's time_us.
package jetstream
