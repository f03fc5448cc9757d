// Package ldsig verifies and makes Linked Data Signatures
// (RsaSignature2017) on ActivityPub activities, as Mastodon and Fedify do,
// so that an inbox can trust an activity that reached it from someone
// other than its actor: a reply forwarded by the addressee's server, or a
// post relayed by a third party.
//
// Verifying a body as an inbox received it:
//
//	v := &ldsig.Verifier{Keys: resolver} // a sig.KeyResolver
//	keyID, owner, err := v.VerifyActivity(ctx, body)
//	// err == nil: owner's key signed body, and owner is its actor
//
// Signing an activity before sending it, so others can forward it:
//
//	signed, err := ldsig.Sign(body, rsaKey, &ldsig.SignOpts{Creator: "https://example.com/users/alice#main-key"})
//
// Both canonicalise with URDNA2015 (github.com/piprate/json-gold) over
// JSON-LD contexts the package ships (ShippedContexts: ActivityStreams,
// security v1 and v2, identity v1, Data Integrity v1 and v2, Multikey,
// DID v1, GoToSocial's and others that Mastodon and Fedify bodies use). A
// context is never fetched: a document naming any other is refused with
// an *UnknownContextError unless Verifier.Contexts supplies it.
//
// The signature covers the RDF graph, not the JSON text: a member no
// context defines is dropped before hashing, and a type name no context
// defines becomes an anonymous node, so neither is signed (as in Mastodon
// and Fedify); and a context inside the document could make the
// same graph read differently as JSON. VerifyActivity therefore refuses a
// document whose own contexts change what a shipped context says a member
// or type name means (ErrContextOverride), and documents with duplicate
// member names. Applications should still ignore members they do not
// know the meaning of.
//
// Data Integrity proofs in the same body: Fedify makes the eddsa-jcs-2022
// proof first and the RsaSignature2017 signature last, over the proof too.
// The proof therefore verifies over the document with signature detached:
//
//	var doc map[string]any
//	_ = json.Unmarshal(body, &doc)
//	proof, err := sig.VerifyProof(ldsig.Detach(doc), edKey)
//
// and to send both, make the proof (sig.CreateProof) before calling Sign.
//
// Canonicalisation costs milliseconds (BENCHMARKS.md compares it with the
// bare RSA verify), and URDNA2015 takes exponential time on crafted
// graphs of look-alike blank nodes (seconds to minutes for a few KB of
// JSON; see blank.go for measurements). Before canonicalising, the
// package converts the document to RDF and refuses, with ErrTooComplex,
// blank-node graphs beyond bounds that real activities stay far inside,
// as well as documents over its size and nesting bounds.
//
// ldsig imports sig and the JSON-LD library only (deps_test.go).
package ldsig
