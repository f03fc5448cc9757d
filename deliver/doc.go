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
// Each request is signed afresh. A host whose scheme is remembered gets that
// scheme only: its refusal is about the activity (GoToSocial answers 400 to a
// correctly signed Like of a status it does not have). A host with none gets
// draft-cavage first (RFC 9421 for an Ed25519 key: Fedify's cavage verifier
// is RSA-only and answers 500), and a 400, 401 or 403 (PeerTube's answer to
// RFC 9421) makes it knock once with the other scheme; the scheme accepted
// is remembered per host. When both knocks are refused, the first answer
// stands for the status, the retry and the breaker, unless a 401 or 403 to
// the first is followed by a 400 to the second: the server read the second.
//
// Queue and BreakerStore are the interfaces durable backends implement (a
// Postgres queue, a Redis breaker store); MemoryQueue and MemoryBreakerStore
// are the in-memory defaults, and deliver/delivertest has the conformance
// suites every implementation passes. Package colsync has FEP-8fcf
// Collection-Synchronization, which a batch sent with SynchronizeCollection
// carries, from Config.Followers.
//
// Failures are *DeliveryError values whose Kind (retryable, permanent, held,
// skipped, deadline, exhausted) says what happened; errors.Is matches the
// sentinels ErrRetryable, ErrPermanent, and so on.
package deliver
