// Command appview is the example atproto AppView built on fedkit. It
// consumes a Jetstream firehose, keeps the handles of bridged users and
// communities verified (package identity), admits and clears their
// fediverse origin fields (package origin), and serves profiles and author
// feeds that carry those fields.
//
// Usage:
//
//	appview serve [flags]              consume Jetstream, redrive, serve XRPC
//	appview migrate [flags]            apply the embedded migrations and exit
//	appview reconcile-handles [flags]  re-check every bridged row, clear origin
//	                                   fields off the trusted hosts, and exit
//
// For example, against a local Postgres and a local Jetstream:
//
//	export DATABASE_URL=postgres://postgres@127.0.0.1:5432/appview
//	export JETSTREAM_URL=ws://127.0.0.1:6008/subscribe
//	export TRUSTED_BRIDGE_PDS_HOSTS=pds.tdpl.io
//	appview serve
//	curl '127.0.0.1:8080/xrpc/dev.fedkit.appview.actor.getProfile?actor=@alice@lemmy.world'
//	appview reconcile-handles -dry-run
//
// # Environment and flags
//
// Each setting is read from the environment, then overridden by its flag.
// Every command takes:
//
//	DATABASE_URL              -database-url   Postgres connection string (required)
//	PLC_URL                   -plc-url        PLC directory (default https://plc.directory)
//	TRUSTED_BRIDGE_PDS_HOSTS  -trusted-hosts  comma-separated bridge PDS hosts
//
// serve also takes:
//
//	JETSTREAM_URL       -jetstream-url       ws:// or wss:// /subscribe URL (required)
//	LISTEN              -listen              HTTP address (default 127.0.0.1:8080)
//	INDEX_ALL_PROFILES  -index-all-profiles  rows for every verified profile, not only bridged ones
//	REDRIVE_INTERVAL    -redrive-interval    redrive period (default 5m; must exceed the
//	                                         identity negative TTL, 90s)
//	LANES               -lanes               ordered per-DID lanes (default 8)
//
// reconcile-handles also takes:
//
//	-dry-run               resolve and verify only; change nothing
//	-clear-identity-cache  empty identity_cache first (refused with -dry-run)
//	-concurrency N         rows checked at once, and the lock pool's size (1-64, default 4)
//	-rate R                resolutions per second per host, PLC counting as one host
//	                       (default 10; 0 is unlimited)
//	-json                  print the report as JSON on stdout
//
// -trusted-hosts replaces TRUSTED_BRIDGE_PDS_HOSTS for the sweep; it must
// name at least one host. Trust is decided by the PDS a fresh DID document
// names, never by the shape of a handle.
//
// The sweep checks two sets of rows: the bridged ones (stored PDS on a
// trusted host) and the off-list ones (any origin field set while the
// stored PDS is not on a trusted host, for example after a host was
// removed from TRUSTED_BRIDGE_PDS_HOSTS). A row whose fresh DID document
// names a PDS off the trusted hosts has its origin fields cleared (spec
// 5.2); a community keeps only an origin its own verified handle allows
// (its handle's registrable domain or a parent below it). A dry run
// clears nothing and, as identity's dry run does not tell, does not say
// which rows a run would clear.
//
// # Exit status
//
//	0   success; for reconcile-handles, every bridged row matches its verified handle
//	1   reconcile-handles: some row does not match (a dry run that would update)
//	2   reconcile-handles: some row could not be checked (resolution, lock, store...)
//	3   the command failed (database, migrations, a serve component)
//	64  bad usage (unknown command or flag, invalid setting)
//
// reconcile-handles prints one line per row on stderr (marked off-list and
// origin-cleared where they apply), or a live progress line when stderr is
// a terminal, and on stdout a summary: the bridged and off-list row counts,
// one line per reason code (identity's Reason constants), how many rows had
// their origin fields cleared (and how many of those were off-list), and
// the verdict. -json carries the same as offList and originCleared, per
// row and in total. Re-run it until it exits 0.
//
// # HTTP
//
// serve answers GET requests under /xrpc/ (and /healthz):
//
//	dev.fedkit.appview.actor.getProfile?actor=A      profile with origin fields
//	dev.fedkit.appview.actor.getPosts?actor=A        the author's posts, newest first
//	    [&limit=1-100][&cursor=C]                    (each with an author view)
//	dev.fedkit.appview.actor.resolveActor?actor=A    {"did", "handle"}
//
// actor is a DID, a handle, name@host or @name@host. A malformed actor is
// 400 InvalidRequest before any query; an unknown one 404 ActorNotFound;
// a name@host matching two accounts only case-insensitively 409
// AmbiguousActor; a database failure a logged 500, never a 404.
//
// # Events
//
// Every Jetstream event is processed on its DID's lane, in arrival order;
// the stored cursor (time_us) never passes an event that is not durably
// handled, so a restart or reconnect resumes without losing or repeating
// one.
//
//   - identity: one indexed read; an unknown DID stops there. A known DID
//     passes a per-DID seq guard and is refreshed by identity.Refresher
//     (fresh resolution, Postgres per-DID advisory lock, cache purges, the
//     fresh PDS URL stored, and origin fields cleared when the DID has left
//     the bridge). A community's new handle must also pass
//     ingest.ValidateCommunityHandle and its stored hosted-by claim.
//   - account: one indexed read and a seq guard; deleted and takendown
//     clear the origin fields and purge the identity cache.
//   - commit app.bsky.actor.profile: origin.Admitter.Admit decides from a
//     fresh resolution; writes are gated by rev.
//   - commit social.coves.community.profile: origin.Admitter.AdmitCommunity
//     (the bridge may assert any origin, other repositories only their
//     handle's registrable domain or a parent below it); a hosted-by claim
//     is kept only when the instance's registrable domain is the handle's.
//   - commit app.bsky.feed.post: indexed for known users.
//
// A new row is created only from a fresh, verified resolution; one whose
// DID document names another DID (identity.ErrSubjectMismatch) is
// permanent, reason subject-mismatch.
//
// Each result is done; permanent (logged and dropped); unresolved (written
// to the redrive table, at most ingest.UnresolvedAttemptsDefault attempts);
// busy or debounced (redriven without spending an attempt); or transient (a
// database error: retried in-line after 200 ms, 1 s and 3 s, then redriven,
// at most ingest.TransientAttemptsDefault attempts).
//
// # Reading the code
//
// The example is meant as a model of using identity and origin:
//
//   - app.go wires them: an uncached identity.Resolver, an identity.Cache
//     over identity/pgstore's table, a pgstore.Lock on its own pool, an
//     identity.Refresher, and an origin.Admitter fed by
//     identity.NewOriginResolver (never the cache); every resolution, on
//     each path, is bounded by the same identity resolve timeout.
//   - internal/store/identity.go is the application side of identity.Store,
//     identity.Lister, identity.OriginLister and identity.PDSSetter (with
//     identity.Subject.Origin filled for communities), and of
//     origin.OriginIndex.
//   - internal/ingest turns Jetstream frames into Refresher and Admitter
//     calls and classifies their results for redrive.
//   - internal/xrpc resolves actors with origin.ParseAddress and
//     origin.LookupOrigin.
//   - reconcile.go runs identity.(*Refresher).Sweep.
package main
