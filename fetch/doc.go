// Package fetch fetches what other servers publish and decides what to
// believe of it, as careful ActivityPub servers do.
//
// A Fetcher goes through the guarded client (package client) and, given a
// Config.Signer, signs its GETs for servers that require authorized fetch:
// with the scheme remembered for the host and only that one; else with
// draft-cavage (RFC 9421 for an Ed25519 key, which Fedify's cavage verifier
// cannot read), knocking once more with the other scheme on a 400, 401 or
// 403 and remembering what worked. When both are refused, the first answer
// stands.
//
//	c, _ := client.New(nil)
//	f, _ := fetch.New(c, &fetch.Config{Signer: signer})
//	doc, err := f.Lookup(ctx, "https://social.example/@alice/1") // a page or a document
//	note, doc, err := fetch.LookupAs[Note](ctx, f, "https://social.example/users/alice/statuses/1")
//
// Lookup's rules: only application/activity+json, or application/ld+json
// with the ActivityStreams profile, is ActivityPub; a web page is searched
// once for an alternate link (Link header, then <link rel="alternate">);
// a document whose id is on another origin than the URL it was served from
// is fetched again from its id and trusted only as the id's origin serves
// it; a document naming an author (attributedTo, actor) on another origin
// than its id is refused. A Document carries the URL it was finally served
// from.
//
// # Collections
//
//	w := f.Walk(outboxURL, fetch.WalkLimits{}) // 100 pages, 10,000 items
//	for item, err := range w.All(ctx) { ... }
//
// Pages must be on the collection's origin (or host, with ByHost); an
// embedded item on another origin is flagged as a Claim, to be looked up
// from its own id. A server linking a next page past the end (WriteFreely)
// ends at the first empty page once totalItems were read, and after
// WalkLimits.EmptyPages empty pages in a row in any case. WalkEmbedded starts from a collection another object
// embeds and keeps to the embedder's origin. UnverifiedJSON reads any JSON
// object for applications with rules of their own.
//
// # Servers and handles
//
// NodeInfo reads what a server runs. WebFinger asks a host about a handle
// (falling back once to host-meta's lrdd template on 404); Resolve and
// Confirm follow Mastodon's ResolveAccountService.
//
// # Keys
//
// KeyResolver is the sig.KeyResolver an inbox wants: it fetches a keyId as
// servers publish it (Mastodon's actor#main-key in publicKey, an object or
// an array; GoToSocial's key document at actor/main-key, whose owner is
// fetched and must list it; FEP-521a Multikeys in assertionMethod),
// requires the key and its owner to name each other on one origin, and
// caches keys (TTL, size bound, one fetch for concurrent misses) and
// failures. RefetchKey fetches a key again after a failed signature, at
// most once per RefetchInterval; a 410 matches ErrGone and sig.ErrGone.
//
//	keys, _ := fetch.NewKeyResolver(f, &fetch.KeyResolverConfig{Signer: instanceActor})
//	v, _ := sig.NewVerifier(keys, nil)
//
// # Budget
//
// WithBudget(ctx, NewBudget(n)) caps the requests made on behalf of one
// incoming activity; past it every fetch fails with ErrBudgetExhausted.
//
// # Portable objects
//
// FEP-ef61 ap:// objects are supported for Ed25519 did:key authorities
// only: Lookup fetches them from Config.Gateways and trusts one only with a
// valid eddsa-jcs-2022 proof (package sig) by a verification method of the
// id's own DID, and only with authors under that DID. Other DID methods,
// proof sets and chains, and gateway discovery are not supported.
//
// # Errors
//
// Each refusal is a sentinel matched with errors.Is (ErrContentType,
// ErrIDMismatch, ErrAuthorOrigin, ErrCrossOriginPage, ErrWalkLimit, ErrNoKey,
// ...), its message naming, bounded, the URL or id at fault; the client's
// own failures (client.ErrBlocked, client.ErrTooLarge, ...) come through
// as they are. A status other than the success expected is a *StatusError,
// for its StatusCode and RetryAfter; it matches ErrNotFound, ErrGone and
// ErrTemporary.
//
// # Telemetry
//
// Config.TracerProvider and MeterProvider default to OpenTelemetry's global
// providers, no-ops until the application installs its own; the package
// uses the OpenTelemetry API only, with the attribute names of
// internal/otelx. Each fetch is a fetch.get span (server.address,
// server.port, url.full, fedkit.fetch.signed, fedkit.fetch.requests,
// fedkit.fetch.outcome: fetched, refused or failed, and
// http.response.status_code or error.type), the parent of one GET client
// span per request it sent: the first, each redirect hop (url.full the
// hop's, http.request.resend_count counting the requests before it) and a
// signed retry with the other scheme (fedkit.fetch.scheme). The
// fedkit.fetch.fetches counter counts fetches by fedkit.fetch.outcome,
// http.response.status_code and error.type (closed values: the status, or
// budget, invalid_url, blocked, hidden_service, too_large,
// too_many_redirects, redirect_loop, scheme_downgrade, timeout, canceled,
// transport, _OTHER); no URL or host.
package fetch
