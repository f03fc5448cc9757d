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
// Config.OnAttempt sees every attempt (delivered, failed, refused or held),
// OnSettled is awaited before a delivery leaves the queue, and SkipIf drops
// a delivery unsent when it comes due. When Run's context ends, deliveries
// in flight get ShutdownGrace (30 s) to finish; one cut off then goes back
// to the queue with no attempt counted, and the rest stay queued.
//
// # How Run spends its resources
//
// A delivery costs one signature of CPU (an RSA-2048 signature is most of
// it: everything else a delivery does costs a fraction of one) and
// then waits on the remote, 50-500 ms for a healthy inbox and up to the
// client's timeouts for a sick one. The two are bounded apart, so that
// servers that are down never slow the ones that are up:
//
//   - Signing is bounded by the cores (GOMAXPROCS signatures at once):
//     more signers than cores only add preemption. Run keeps at most 16
//     deliveries per core on their way to their signature, and claims
//     again once half of that line is free, so when inboxes answer at
//     once it keeps a short line at the signers instead of thousands of
//     goroutines, and each claim (a statement, on pgqueue) brings several.
//     A delivery yields to the scheduler before it joins the signers, so
//     that answers already back are read first: Go runs work woken on a
//     busy core ahead of work woken by the network, and without the yield
//     answers were read only when the signers ran dry, holding their
//     hosts' slots meanwhile.
//   - Waiting is bounded by Config.Concurrency (ConcurrencyDefault, 2048
//     deliveries in flight) and by the per-host limit (Config.PerHost, 2,
//     or a HostLimiter shared by several Deliverers). Concurrency is a
//     memory bound, not a CPU one: at 300 ms two cores' sign rate needs
//     some 800 requests in flight, and a few percent of tarpits and slow
//     servers hold their own share meanwhile.
//   - A claimed delivery whose host is at its limit parks: it gives its
//     Concurrency place back, so Run claims deliveries to other hosts
//     meanwhile, and it takes a place again once its host has a free slot
//     (up to 4 parked per place; past that it waits holding its place).
//     A host at its limit therefore never holds up the others.
//   - A host that keeps failing opens its breaker: after 10 failures in a
//     row (Config.Breaker; a timeout, such as a tarpit's, is a failure)
//     its deliveries are held for a minute, each hold counting as an
//     attempt, then one probe at a time goes through. A tarpit thus costs
//     ten timeouts, not one per delivery.
//   - Each attempt, both knocks included, is cut at
//     Config.AttemptTimeout (60 s, at most half the Lease), and a delivery
//     that waited so long for its host that its lease has less than that
//     left goes back to the queue unsent: a request never outlives its
//     lease, so a shared queue (pgqueue) never hands a delivery in flight
//     to another process.
//
// The remaining knobs: Lease (5 min) is how long a claim is reserved;
// PollInterval (1 s) is how often an idle Run looks for due work (a
// Notifier queue wakes it sooner); ShutdownGrace (30 s) bounds the wait for
// deliveries in flight when Run's context ends. An application should not
// need to tune any of them; BenchmarkFanoutField measures the defaults on a
// simulated fediverse of healthy, slow, flaky and tarpit hosts.
//
// # Signature schemes and unavailable hosts: the policy
//
// The network is mixed (2026): Mastodon verifies RFC 9421 since 4.5 and
// signs it since 4.7, draft-cavage first; Fedify and WordPress sign RFC
// 9421 first; Misskey, GoToSocial, Akkoma, Pixelfed, Lemmy and WriteFreely
// read draft-cavage only. The Deliverer learns each host, by its
// host[:port], and this is the whole of what it does, each request signed
// afresh:
//
//   - First scheme. A host with nothing remembered gets draft-cavage,
//     which every server reads (Pixelfed even answers RFC 9421 with 200 and
//     drops it, so a knock cannot tell); an Ed25519 key signs RFC 9421
//     first, since Fedify's cavage verifier is RSA-only and answers 500.
//     Config.FirstScheme overrides both.
//   - Fallback, the double knock. A refusal of the first knock, 400, 401
//     or 403 (PeerTube's answer to RFC 9421), gets exactly one second knock
//     in the same attempt, never after a 2xx, a 5xx, another 4xx, a timeout
//     or a dropped connection, so no delivery is sent twice because of it.
//     With nothing remembered the second knock is the other scheme. A host
//     remembered as RFC 9421 that answers 401 or 403 falls back to
//     draft-cavage at once (a downgrade, a verifier switched off); a host
//     remembered as draft-cavage gets no second knock, since its refusal is
//     about the activity (GoToSocial answers 400 to a correctly signed Like
//     of a status it lacks). When both knocks are refused the first answer
//     stands for the status, the retry and the breaker, unless a 401 or 403
//     to the first is followed by a 400 to the second: the server read the
//     second. Any other answer to the second knock (a 5xx, a 410) stands.
//     The scheme accepted is remembered, with when (Config.Schemes).
//   - Negotiation (RFC 9421 section 5). A refusal carrying
//     Accept-Signature, as fedkit's own inbox (sig/inbox, sig's
//     Middleware) and Fedify send, makes the second knock sign as it asks:
//     its label, components in order, algorithm, tag, nonce and expires,
//     and its key id when SenderKeys has that key. This happens whatever is
//     remembered, since the host said what it wants; one it cannot meet
//     leaves the rule above. The shape a host accepted is kept in memory
//     (4,096 hosts), so its later deliveries sign so at the first knock.
//     DisableNegotiation ignores the field.
//   - Re-probe. A host remembered as draft-cavage for ReprobeAfter (7
//     days) is tried with RFC 9421 once, on an ordinary delivery, knocking
//     as for a host with nothing remembered: an upgraded host (Mastodon 4.5)
//     moves to RFC 9421 without an operator, and one that still reads only
//     draft-cavage costs one refused request a week and gets its delivery
//     on the second knock. The probe is claimed in the store before it is
//     sent, so deliveries meanwhile, in this process or another sharing
//     the store, do not probe too. It needs a store that keeps dates
//     (sig.LearnedSchemeStore: the default memory one, sig/redisschemes,
//     sig/pgschemes, which also keep the memory across restarts);
//     DisableReprobe keeps a remembered scheme for good. A Pixelfed host
//     would accept the probe and drop what follows (see above): deployments
//     delivering to many Pixelfed servers should set DisableReprobe.
//   - Availability. A host failing (no answer, a timeout, a 5xx, 408 or
//     429; never a refusal) on Availability.Days (7) distinct UTC days by
//     the caller's clock, with no success in between, becomes unavailable,
//     as with Mastodon's delivery failure tracker: a week outlasts a
//     weekend's outage or a migration, so only a server that is gone gets
//     there. Its deliveries are then settled as skipped (ErrUnavailable)
//     and reported to Availability.OnSkipped until it is seen alive: a
//     delivery it accepts, an activity from it (the application calls
//     Deliverer.SeenAlive from its inbox), a fetch it answers
//     (fetch.Config.Alive), or an operator's SeenAlive on the store. The
//     circuit breaker handles the minutes; this rule, the days. The check
//     costs one map read from memory; deliver/redisavailability and
//     deliver/pgavailability share it across processes.
//     DisableAvailability tries every host for ever.
//
// # Backends
//
// What a backend implements lives in package deliver/driver, as River
// keeps riverdriver apart from river: driver.Queue, driver.BreakerStore and
// driver.AvailabilityStore and the types they trade in (Envelope, Job,
// Outcome, Result, Lane, BatchStatus, DropFilter), with their conformance
// suites in driver/drivertest. The durable backends are deliver/pgqueue,
// deliver/redisbreaker, deliver/redisavailability and
// deliver/pgavailability; MemoryQueue, MemoryBreakerStore and
// MemoryAvailabilityStore, here, are the in-memory defaults. The scheme
// memory's interface and backends live under sig (sig.SchemeStore,
// sig/redisschemes, sig/pgschemes). Package colsync has FEP-8fcf
// Collection-Synchronization, which a batch sent with SynchronizeCollection
// carries, from Config.Followers; deliver/delivertest records a
// Deliverer's hooks for an application's tests.
//
// A queue whose store is away (a database restarting) fails with errors
// matching driver.ErrQueueUnavailable: Send stores nothing and may be
// retried, and Run keeps going, backing off from PollInterval to 5 s between
// claims with one log line when the outage begins and one when it ends.
// A breaker, availability or scheme store that fails does not stop
// delivery (each delivery goes on as if the store knew nothing), and logs
// the same way: one warning at its first failure, one line with the count
// of failed calls when it answers again.
//
// Two vocabularies say what happened: an Attempt's Outcome (delivered,
// failed and to be retried, refused for good, held by the breaker), and a
// Settlement's Result (delivered, failed, gave up, skipped). An attempt
// that did not deliver carries a *DeliveryError with its status,
// Retry-After and breaker Until; a delivery given up or skipped says why
// with ErrDeadline, ErrExhausted, ErrSkipped or ErrUnavailable.
//
// # Telemetry
//
// Config.TracerProvider and MeterProvider default to OpenTelemetry's global
// providers, no-ops until the application installs its own; the package
// uses the OpenTelemetry API only. Attribute names live in internal/otelx.
//
// Spans: SendBatch opens deliver.enqueue (producer; activitypub.activity.id
// and .type, activitypub.actor.id, activitypub.inboxes, fedkit.deliver.lane)
// and stores its W3C traceparent in driver.Envelope.TraceParent, which every
// Queue keeps (pgqueue in a column), so each attempt's deliver.attempt span
// (client) links to it in whatever process claims the job. An attempt's span
// has the HTTP client attributes (http.request.method, server.address,
// server.port, url.full, http.response.status_code), the activity's id and
// type, activitypub.activity.retries (attempts before this one),
// fedkit.deliver.outcome (delivered, failed, refused, held),
// fedkit.deliver.scheme (cavage, rfc9421, none), fedkit.deliver.probe, and
// on failure error.type: the status code, or one of held, signing, timeout,
// blocked, invalid_url, hidden_service, redirect, transport, _OTHER.
//
// Metrics: fedkit.deliver.deliveries counts attempts by
// fedkit.deliver.outcome and fedkit.deliver.scheme;
// fedkit.deliver.attempt.duration (s) is the histogram of attempts that sent
// a request. Neither carries an inbox or a host unless Config.MetricHosts
// adds server.address. While Run runs, fedkit.deliver.queue.depth reports
// the queued deliveries per fedkit.deliver.lane (for MemoryQueue and a
// Queue implementing driver.DepthCounter, as pgqueue does) and
// fedkit.deliver.breakers.open the lights open or probing (for a
// BreakerStore implementing driver.BreakerCounter: MemoryBreakerStore,
// redisbreaker).
package deliver
