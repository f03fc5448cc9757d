// Package main implements appview, the example atproto AppView built on
// fedkit: it consumes a Jetstream firehose, keeps the handles of bridged
// users and communities verified (identity), admits and clears their
// fediverse origin fields (origin), and serves profiles and author feeds
// that carry those fields.
//
// Commands:
//
//	appview serve               consume Jetstream, redrive, serve XRPC on LISTEN
//	appview migrate             apply the embedded migrations and exit
//	appview reconcile-handles   re-check every bridged row; exit 0 only if all match
//
// Configuration comes from the environment, overridden by flags:
// DATABASE_URL, JETSTREAM_URL, TRUSTED_BRIDGE_PDS_HOSTS, PLC_URL, LISTEN,
// and optionally INDEX_ALL_PROFILES, REDRIVE_INTERVAL and LANES.
//
// Event handling:
//
//   - identity: one indexed read; an unknown DID stops there. A known DID
//     passes a per-DID seq guard and is refreshed by identity.Refresher
//     (fresh resolution, Postgres per-DID advisory lock, cache purges, the
//     fresh PDS URL stored through identity.PDSSetter, and origin fields
//     cleared when the DID has left the bridge). A community's new handle
//     must also pass ingest.ValidateCommunityHandle and re-check its stored
//     hosted-by claim (ingest.HostedBy).
//   - account: one indexed read, seq guard; deleted and takendown clear the
//     origin fields and purge the identity cache.
//   - commit app.bsky.actor.profile: origin.Admitter.Admit decides from a
//     fresh resolution; rev-gated writes.
//   - commit social.coves.community.profile: origin.Admitter.AdmitCommunity
//     (the bridge may assert any origin, other repositories only their
//     handle's registrable domain or a parent below it); the fresh PDS URL
//     replaces the stored one; a hostedBy claim is kept only when the
//     instance's registrable domain is the handle's.
//   - commit app.bsky.feed.post: indexed for known users.
//
// Every result is done, permanent (logged, dropped), unresolved (redrive
// table, at most ingest.UnresolvedAttemptsDefault attempts), busy
// (redriven without spending an attempt) or transient (a database error:
// retried in-line after 200 ms, 1 s and 3 s, then redriven, at most
// ingest.TransientAttemptsDefault attempts).
package main
