// Package fedkit is a Go library for fediverse servers that federate:
// send, fetch, sign and verify ActivityPub traffic safely, take part in
// Activity-Relay Directories, and keep bridged atproto identities honest.
//
// This root package holds no code. The packages are:
//
//   - [github.com/fedkit/fedkit/client]: the one guarded, pooled HTTP client
//     every outgoing request goes through (SSRF guard on resolved addresses,
//     its own redirect handling, size and time bounds).
//   - [github.com/fedkit/fedkit/sig]: HTTP Signatures (draft-cavage-12 and
//     RFC 9421), Digest and Content-Digest, keys (PEM, Multikey), Data
//     Integrity proofs (eddsa-jcs-2022), inbound verification and
//     Accept-Signature negotiation; the NonceStore and scheme-memory
//     conformance suites in sig/sigtest; the scheme memory in Redis and
//     Postgres in sig/redisschemes and sig/pgschemes; an inbox handler and
//     authorized-fetch middleware in sig/inbox; Linked Data Signatures
//     (RsaSignature2017) in sig/ldsig.
//   - [github.com/fedkit/fedkit/deliver]: a queued Deliverer with retries,
//     circuit breakers, ordering keys, batches, lanes, hooks and a memory
//     of hosts gone for days; what a backend implements in deliver/driver,
//     with its conformance suites in deliver/driver/drivertest; backends in
//     deliver/pgqueue (PostgreSQL), deliver/redisbreaker (Redis),
//     deliver/redisavailability and deliver/pgavailability; a hook recorder
//     for tests in deliver/delivertest; and FEP-8fcf followers
//     synchronisation in deliver/colsync.
//   - [github.com/fedkit/fedkit/fetch]: a Fetcher with ActivityPub origin
//     rules, collection walks, WebFinger, NodeInfo, resolve and confirm, and
//     the KeyResolver an inbox verifies with; actor documents, WebFinger,
//     host-meta and NodeInfo endpoints to serve in fetch/serve.
//   - [github.com/fedkit/fedkit/directory]: the Activity-Relay Directory
//     client (protocol v1-v3), its scheduler and durable unregister; Redis
//     state in directory/redisstate; a fake Directory in
//     directory/directorytest.
//   - [github.com/fedkit/fedkit/identity]: atproto DID and handle
//     resolution, verified handle refresh under a per-DID lock, and the
//     reconciliation sweep; Postgres backend in identity/pgstore; an offline
//     test network, fakes and conformance suites in identity/identitytest.
//   - [github.com/fedkit/fedkit/origin]: URL origins, registrable domains,
//     bridged-profile origin fields and fediverse addresses.
//
// Dependencies point one way: client, sig and origin import no other fedkit
// package; fetch and deliver build on them; directory and identity build on
// client, sig and origin; backends import their parent and one driver. The
// examples (examples/relay, examples/appview, and examples/minimal, a whole
// server in under 100 lines) show them wired together.
//
// # Clocks
//
// One rule for time, in every package: each Config's Now defaults to
// time.Now, and a component handed to another takes that one's clock when
// its own Now is unset. A test therefore sets time once, on the outermost
// component (the Deliverer, the Verifier, the Fetcher, the Scheduler, the
// identity Refresher or Cache), and every comparison inside runs on that
// clock; a Now set on an inner component stands. A store keeps one clock
// per rule: it compares the times it is given with the caller's clock, or
// lets its server time a duration (a Redis TTL), never both in one
// comparison (each store's package doc says which).
package fedkit
