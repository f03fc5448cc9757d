// Package sig signs and verifies what fedkit sends and receives: HTTP
// signatures in both schemes the fediverse speaks (draft-cavage-12, as
// Mastodon signs, and RFC 9421), body digests (RFC 9530 Content-Digest,
// RFC 3230 Digest), keys (PEM, Multikey), and Data Integrity proofs
// (eddsa-jcs-2022, FEP-8b32).
//
// Signing an outgoing request, Mastodon's way, with either scheme:
//
//	key, _ := sig.ParsePrivateKeyPEM(pemBytes)
//	s, _ := sig.NewSigner(key, "https://example.com/actor#main-key", nil)
//	req, _ := http.NewRequest("POST", inbox, bytes.NewReader(activity))
//	err := s.Sign(req, sig.SchemeCavage) // or sig.SchemeRFC9421
//
// Full control over an RFC 9421 signature (label, components, parameters):
//
//	err := sig.SignRFC9421(req, key, &sig.SignOpts{
//		Label:      "directory",
//		Components: []string{"@method", "@authority", "@target-uri", "content-digest", "content-type", "date"},
//		KeyID:      keyID, Alg: sig.AlgRSAv15SHA256, Tag: tag, Nonce: nonce,
//		Created:    now, Expires: now.Add(5 * time.Minute),
//	})
//
// Verifying inbound requests, as middleware or as a function:
//
//	v, _ := sig.NewVerifier(myKeyResolver, nil)
//	http.Handle("/inbox", v.Middleware(inbox))
//	res, err := v.Verify(req) // res.KeyID, res.Owner, res.Scheme
//
// Signer.Sign reads the clock for each request, and deliver and fetch sign
// each attempt just before sending it: keep it that way. Misskey and
// PeerTube refuse a Date more than 2 s ahead of their clock (and Misskey
// one more than 300 s old), so a request signed early, or by a host whose
// clock runs ahead, fails there although Mastodon's hour of skew would
// pass it. Misskey's own Ed25519 cavage signatures say
// algorithm="ed25519-sha512" (CavageEd25519SHA512); the Verifier reads
// that as Ed25519.
//
// An RFC 9421 signature may stand @path (with @authority) in for
// @target-uri, but then a request with a query must sign it too, with
// @query or one @query-param per parameter (else ErrMissingComponent). A
// server behind a TLS-terminating proxy sets VerifierConfig.URLScheme; a
// signature that verifies only with the other scheme is reported as a
// *SchemeMismatchError (still ErrBadSignature) naming both.
//
// An inbox that ties each activity to its actor, and authorized fetch for
// GETs, are in package sig/inbox. LoadOrGenerateKey keeps an actor's key in
// a 0600 PEM file, made on first run.
//
// Keys come from PEM (ParsePrivateKeyPEM, ParsePublicKeyPEM: PKCS#1,
// PKCS#8, SPKI, SEC 1; RSA keys under the id-RSASSA-PSS OID too, as RFC
// 9421's test-key-rsa-pss, read as plain RSA keys) or Multikey.
//
// Signature-Input, Signature and Content-Digest in their usual canonical
// shape are read by a strict hand-written parser; anything else goes
// through httpsfv, with the same results either way.
//
// Replay protection is a NonceStore (MemoryNonceStore, or your own held to
// the sigtest.TestNonceStore suite) set in VerifierConfig.Nonces.
//
// Senders remember per host which scheme a server accepted in a SchemeStore
// (held to the sigtest.TestSchemeStore suite); HostSchemes (NewHostSchemes)
// is the bounded in-memory one, the default of deliver and fetch, and one
// store may serve both.
//
// Object proofs (FEP-8b32, eddsa-jcs-2022):
//
//	doc = sig.WithDataIntegrityContext(doc)
//	signed, _ := sig.CreateProof(doc, edKey, &sig.ProofOpts{VerificationMethod: keyURL, Created: now})
//	proof, err := sig.VerifyProof(signed, edPub)
//
// sig imports no other fedkit package.
//
// # Telemetry
//
// VerifierConfig.TracerProvider and MeterProvider default to
// OpenTelemetry's global providers, no-ops until the application installs
// its own; the package uses the OpenTelemetry API only, with the attribute
// names of internal/otelx. Each Verify (and so each request through
// Middleware) is a sig.verify span, the parent of the key resolution's
// spans: fedkit.sig.outcome (verified, refused), fedkit.sig.scheme (cavage,
// rfc9421, none), http_signatures.verified, and on success
// http_signatures.key_id and activitypub.actor.id (the key's owner), on
// failure error.type. The fedkit.sig.verifications counter counts them by
// fedkit.sig.outcome, fedkit.sig.scheme and error.type, a closed set:
// no_signature, expired, unknown_key, gone, digest_mismatch,
// scheme_mismatch, bad_signature, unsupported_algorithm, missing_component,
// malformed, replay, weak_key, unsupported_key, canceled, _OTHER. No key
// ID, actor or host reaches a metric.
package sig
