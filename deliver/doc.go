// Package deliver sends activities to inboxes: queued, signed afresh on
// every attempt, retried, ordered, and guarded by a circuit breaker.
//
// An application hands a Deliverer an activity and the inboxes it works out
// (deduplicated here; prefer shared inboxes), and runs the Deliverer's loop:
//
//	c, _ := client.New(nil) // the guarded client: every request goes through it
//	keys := deliver.NewCachingSenderKeys(myKeys, nil) // one key load per send, not per inbox
//	d, _ := deliver.New(&deliver.MemoryQueue{}, keys, c, nil)
//	go d.Run(ctx) // when ctx ends, finishes what is in flight
//
//	err := d.Send(ctx, keyID, create, inboxes)
//	err = d.SendBatch(ctx, keyID, del, inboxes, deliver.Batch{
//		Tag: "delete-1", Deadline: time.Now().Add(24 * time.Hour),
//		OrderingKey: objectID, // the Delete waits for its Create
//	})
//	st, _ := d.Status(ctx, "delete-1")
//
// An application signing with one key passes deliver.SingleKey{KeyID,
// Signer}; SenderKeysFunc adapts a lookup function.
//
// SendPortable delivers to portable actors (FEP-ef61): an ap:// inbox goes
// to each of the actor's gateways, at GatewayInboxes' URLs, as one send
// through the same queue.
//
// A send is stored once and fans out to one job per inbox, each retried on
// its own: network errors, 408, 429 and 5xx wait 30 s doubling to 1 h, 12
// attempts in all (about 5 h), or at least what Retry-After asked (on any of
// those statuses, capped at 6 h); other 4xx are refused for good and
// reported to Config.OnFailure. Config.Permanent and PermanentIfSenderGone
// change that rule (MastodonPermanent is Mastodon's). A Batch adds a tag
// (Status, OnSettled), a deadline, fewer attempts, a priority or low lane,
// an ordering key, and FEP-8fcf Collection-Synchronization.
//
// Config.OnAttempt sees every attempt (delivered, failed or held),
// OnSettled is awaited before a delivery leaves the queue, and SkipIf drops
// a delivery unsent when it comes due. When Run's context ends, deliveries
// in flight get ShutdownGrace (30 s) to finish; one cut off then goes back
// to the queue with no attempt counted, and the rest stay queued.
//
// A host that keeps failing opens its breaker: after 10 failures in a row
// its deliveries are held for a minute (each hold counts as an attempt),
// then one probe at a time goes through. At most 2 deliveries per host are in
// flight (Config.PerHost, or a HostLimiter shared by several Deliverers).
// Each request is signed with draft-cavage first; a 400 or 401 makes it try
// RFC 9421 at once, and the scheme that worked is remembered per host.
//
// Queue and BreakerStore are the interfaces durable backends implement (a
// Postgres queue, a Redis breaker store); MemoryQueue and MemoryBreakerStore
// are the in-memory defaults, and deliver/delivertest has the conformance
// suites every implementation passes. Package colsync has FEP-8fcf
// Collection-Synchronization, which a batch sent with SynchronizeCollection
// carries, from Config.Followers.
//
// A queue whose store is away (a database restarting) fails with errors
// matching ErrQueueUnavailable: Send stores nothing and may be retried, and
// Run keeps going, backing off from PollInterval to 5 s between claims with
// one log line when the outage begins and one when it ends.
//
// Failures are *DeliveryError values whose Kind (retryable, permanent, held,
// skipped, deadline, exhausted) says what happened; errors.Is matches the
// sentinels ErrRetryable, ErrPermanent, and so on.
package deliver
