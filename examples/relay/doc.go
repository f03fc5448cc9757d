// Command relay is fedkit's example ActivityPub relay: Mastodon, Misskey and
// LitePub (Pleroma, Akkoma) servers subscribe to it, and every public post
// one of them sends it is passed on to all the others.
//
// Run it locally in one command (embedded store, in-memory queue, no
// database server):
//
//	go run ./examples/relay -c examples/relay/config.example.yml
//
// It listens on 127.0.0.1:8080, generates its RSA actor key on first start
// (examples/relay/data/actor.pem, next to the subscriber list) and logs the
// status page's URL with a token made for this run.
//
// # Usage
//
//	relay [-c FILE] [server]     HTTP (actor, WebFinger, NodeInfo, inbox, status page),
//	                             deliveries, and the Directory scheduler when enabled
//	relay [-c FILE] worker       deliveries only; needs POSTGRES_URL
//	relay -t | --test-config [-c FILE] [--strict]
//	                             validate the configuration: no network, no state changes
//	relay [-c FILE] directory status [origin]
//	relay [-c FILE] directory register|heartbeat|sync origin
//	relay [-c FILE] directory unregister origin [--remove] [--acknowledge-external-disable]
//	relay [-c FILE] subscribers unavailable [--remove [--yes]]
//	                             subscribers whose host has been unavailable for 30 days
//	                             (deliveries to it skipped, see package deliver); --remove
//	                             deletes them after confirmation. Needs REDIS_URL or
//	                             POSTGRES_URL, where the server keeps host availability
//	relay [-c FILE] hosts available host
//	                             the operator's clear: deliveries to host resume
//
// Flags may come anywhere on the line:
//
//	-c, --config FILE    the configuration file; default ./config.yml, and
//	                     without that file the environment alone
//	-t, --test-config    validate and print what would be used, then exit
//	--strict             with -t: optional Directory profile values that
//	                     would be dropped with a warning fail instead
//	--remove             with unregister: also delete the entry from FILE;
//	                     with subscribers unavailable: delete those listed
//	--yes                with subscribers unavailable --remove: do not ask
//	--acknowledge-external-disable
//	                     with unregister, for environment-only configuration
//	                     (or a read-only FILE managed at its source): the
//	                     entry is disabled there. Refused (exit 2) when FILE
//	                     is writable: plain unregister disables it in FILE
//	-h, --help           usage
//
// # Configuration and environment
//
// The file's keys are documented in config.example.yml. POSTGRES_URL,
// REDIS_URL and ADMIN_TOKEN in the environment override the file's, so
// secrets need not live in it. Without a file every key is read from the
// environment variable of the same name (PUBLIC_URL, LISTEN, DATA_DIR,
// ACTOR_KEY, SERVICE_NAME, SUMMARY, REDIS_PREFIX, MANUAL_APPROVAL,
// JOB_CONCURRENCY, BLOCKED_DOMAINS and ALLOWED_DOMAINS as comma-separated
// lists, and the Directory keys package directory reads); the Directory
// scheduler can only be enabled from a file, which unregister must be
// able to edit.
//
// # Exit codes
//
//	0   success
//	1   the command ran and failed (a refusal, an invalid response, a server error)
//	2   bad command line
//	3   invalid configuration (relay -t, or any command)
//	75  try again later (EX_TEMPFAIL): a retryable Directory failure, a lease
//	    held by the scheduler, an unregister left pending
//
// SIGINT and SIGTERM stop a server or worker gracefully: the HTTP server
// finishes its requests, deliveries in flight finish, claimed jobs and the
// scheduler's lease are given back.
//
// # How it is built from fedkit
//
//   - every outgoing request goes through the guarded client (package client);
//   - the inbox is package sig/inbox's (Handler.Accept): a bounded body, the
//     signature, draft-cavage or RFC 9421, with keys fetched through package
//     fetch and cached (never for a refused domain: 403), a key that no
//     longer verifies fetched again once (key rotation); the key's owner
//     must be the activity's actor, or the answer is 401 (the relay sends
//     on only what the actor signed: no LD signature, proof or refetch
//     stands in, and a gone actor's unsigned Delete is refused); a body
//     that is no activity is 400, one over 1 MiB 413;
//   - Follow of the Public collection (Mastodon, Misskey) or of the relay
//     actor (LitePub) is answered with an Accept, or kept pending under
//     MANUAL_APPROVAL until approved on the status page; a LitePub relay
//     actor is followed back, since it publishes to its followers; Undo
//     Follow unsubscribes;
//   - a subscription covers its whole server: Mastodon and Misskey send each
//     public post signed by its author, not by the instance actor that
//     subscribed. So a server has one Mastodon-style subscription: a Follow
//     of Public from another of its actors is answered 409. The inbox the
//     relay keeps (the actor's shared inbox, else its inbox) must be on the
//     actor's own server (same host and port), or the Follow is answered
//     422 and nothing is sent: no one can aim the relay's Accepts and posts
//     at another server;
//   - public Create, Announce and Update, and any Delete or Move, from a
//     subscribed server go to every other subscriber through
//     deliver.Deliverer: forwarded byte for byte to Mastodon-style
//     subscribers (their Linked Data signature must survive), Create and
//     Announce wrapped in the relay's Announce for LitePub ones, all with the
//     object's id as ordering key so a Delete never overtakes its Create;
//     a LitePub relay actor's Announce counts as public although it is
//     addressed to its followers. Each post reaches each subscribed server
//     once (one subscription per server is used, the Mastodon-style one if
//     there is one; inboxes are deduplicated), and never the server it came
//     from nor the server of the object it carries;
//   - loops between relays are cut: an activity id is relayed at most once
//     within 6 hours (a seen-set shared by every process: in Redis with
//     REDIS_URL, else in Postgres with POSTGRES_URL, else in this process's
//     memory, bounded by count and age), an Announce of an object the
//     relay relayed in that time (a LitePub relay wrapping what it was sent
//     under a new id) or of one of the relay's own activities is not
//     relayed, and a subscriber that follows again while subscribed is
//     accepted but not followed back again (two relays would otherwise
//     follow back each other's follow-backs forever);
//   - each server may send the inbox RATE_LIMIT_PER_MINUTE activities a
//     minute (600 by default) in bursts of RATE_LIMIT_BURST (120); beyond
//     that the inbox answers 429 with a Retry-After, so one noisy or hostile
//     subscriber cannot flood the others;
//   - the status page (/admin/status, and /admin/status.json, behind
//     ADMIN_TOKEN) reads each host's circuit breaker from the deliverer's
//     breaker store (open, probing, or closed with its failures in a row,
//     and until when it is open): with REDIS_URL the state every process
//     shares, else the relay's own deliver.MemoryBreakerStore. Beside it,
//     the deliverer's OnAttempt hook keeps what this process's deliveries
//     saw of each host, and its recent failures;
//   - /metrics serves Prometheus text format (behind ADMIN_TOKEN on LISTEN,
//     or on METRICS_LISTEN without it), and OTEL_EXPORTER_OTLP_ENDPOINT pushes
//     traces and metrics by OTLP/HTTP; the OpenTelemetry SDK and exporters
//     live here, in telemetry.go, and reach the library packages only as
//     the TracerProvider and MeterProvider of their Configs (nothing is
//     installed globally). The status page charts the last hour's
//     deliveries per minute, counted from the deliverer's OnAttempt hook;
//   - subscribers live in an atomically rewritten JSON file by default, or in
//     Postgres with pgqueue as the durable queue (POSTGRES_URL), shared by
//     any number of server and worker processes; REDIS_URL shares the
//     circuit breakers (redisbreaker) and the Directory scheduler's state and
//     lease (redisstate);
//   - the Directory commands and scheduler are package directory's.
//
// # Limits
//
//   - Without REDIS_URL each process has its own breakers, and its status
//     page shows only those; a worker's are not visible on the server's
//     page. With REDIS_URL every process's page shows the shared ones.
//   - Replays are refused only for RFC 9421 signatures that carry a nonce
//     (a sig.MemoryNonceStore, per process). Mastodon signs without one,
//     and a verifier with a NonceStore requires one, so other requests may
//     be replayed within the signature window; that costs only deliveries:
//     forwarded activities keep the sender's id and the relay's Announce of
//     an activity always has the same id, so receivers deduplicate them.
//   - The rate limit is counted per process: N server processes admit up
//     to N times RATE_LIMIT_PER_MINUTE.
//   - One Mastodon-style subscription per server is checked against the
//     stored list, not by the store: two Follows of one server racing each
//     other can both be stored, and the fan-out still sends that server one
//     delivery.
//   - LitePub servers check a forwarded activity signed by someone other
//     than its actor by fetching it from its origin, so a forwarded Delete
//     or Update may not take effect there.
package main
