// Package inbox receives what other servers send: an ActivityPub inbox
// (http.Handler) and authorized-fetch middleware for GETs.
//
// The inbox reads a bounded body, verifies the HTTP signature (either
// scheme, through package sig), and then ties the activity to its actor:
// the signature's key is the actor's, or else (a forwarded or relayed
// activity) an RsaSignature2017 LD signature or an eddsa-jcs-2022 proof by
// the actor's key vouches for it, or it is refetched from its id on the
// actor's origin. The application receives the Activity with the signer
// and the Trust that established it; refusals are *RefusalError values
// with a Reason, answered as Mastodon answers (202, 400, 401, 413).
//
//	keys, _ := fetch.NewKeyResolver(fetcher, &fetch.KeyResolverConfig{Signer: instanceActor})
//	in, _ := inbox.New(keys, func(ctx context.Context, a *inbox.Activity) error {
//		// a.Type, a.Actor, a.Trust, a.Decode(&v)
//		return nil
//	}, &inbox.Config{Objects: fetcher, LD: ldVerifier})
//	mux.Handle("POST /users/{name}/inbox", in)
//
//	guarded, _ := inbox.NewAuthorizedFetch(keys, mux, &inbox.AuthorizedFetchConfig{
//		Allow: func(r *http.Request) bool { return r.URL.Path == "/actor" }, // the instance actor
//	})
//
// A key that fails to verify is refetched once (rotation) when the
// KeyResolver implements KeyRefetcher, as *fetch.KeyResolver does. A key
// whose actor answered 410 Gone (sig.ErrGone) still lets that actor's
// Delete of itself through, with TrustGone.
//
// Fetching happens behind interfaces this package owns (sig.KeyResolver,
// KeyRefetcher, Refetcher, LDVerifier); it imports only sig.
//
// # Telemetry
//
// The providers are Config.Verifier's TracerProvider and MeterProvider
// (OpenTelemetry's globals by default, no-ops until the application
// installs its own): the signature check reports to them as package sig
// says (a sig.verify span, fedkit.sig.verifications), and each Accept (so
// each POST to ServeHTTP) is an inbox.accept span, the sig.verify span's
// parent, with fedkit.inbox.outcome (accepted, refused), on acceptance
// fedkit.inbox.trust (signature, ld_signature, proof, refetch, gone),
// activitypub.activity.id, activitypub.activity.type (qualified, as Fedify
// writes it), activitypub.actor.id and http_signatures.key_id, and on
// refusal error.type: body_too_large, not_activity, malformed_signature,
// no_signature, bad_signature, key_gone, signer_not_actor. The
// fedkit.inbox.activities counter counts them by fedkit.inbox.outcome and
// fedkit.inbox.trust or error.type.
package inbox
