// Package origin compares URL origins and hosts, finds registrable domains,
// and admits, sanitises and clears the fediverse origin fields of bridged
// atproto profiles.
//
// It imports no other fedkit package; beyond the standard library it uses
// golang.org/x/net (publicsuffix, idna) and golang.org/x/text (NFC).
//
// # Origins and domains
//
//	origin.SameOrigin("https://a.example/x", "HTTPS://A.example:443/y") // true
//	origin.SameHost("https://a.example", "http://a.example:8080")      // true
//	o, _ := origin.Parse("https://Bücher.example./p")                  // https://xn--bcher-kva.example
//	rd, _ := origin.RegistrableDomain("pds.tdpl.io:443")                // "tdpl.io"
//
// RegistrableDomain refuses IP literals, single-label hosts and public
// suffixes with an error; compare domains with SameRegistrableDomain, which
// denies on any error.
//
// # Bridged origin fields
//
// A bridge (an ActivityPub to atproto bridge such as Tidepool) writes
// origin, originUsername, originUrl and originSoftware into bridged
// profiles. Sanitize drops fields that break the rules, never the record.
// An Admitter decides per event whether the fields are believed:
//
//	adm, _ := origin.NewAdmitter(freshResolver, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io"}})
//	d := adm.Admit(ctx, origin.Event{DID: did, Fields: asserted, Known: rowExists})
//	switch d.Outcome {
//	case origin.OutcomeAdmit, origin.OutcomeClear: // store d.Write, apply the rest
//	case origin.OutcomeDrop: // unknown user, not admitted: create nothing
//	case origin.OutcomeRetry: // write nothing, redrive later
//	}
//
// The Resolver an Admitter consumes must resolve uncached; the identity
// package supplies one. Each resolution is bounded by
// AdmitConfig.ResolveTimeout (5 s), and a Decision carries the Resolution it
// was made on, so a new row is created without resolving the DID again. A Write's nil field leaves its column untouched
// (NULL on a new row); a pointer to "" is a visible clear.
// ClearOnRefresh and ClearOnAccountStatus say when an identity refresh or
// an account event clears stored fields at once.
//
// # Addresses
//
// ParseAddress accepts a DID, a handle, "name@host" or "@name@host", and
// LookupOrigin resolves the last form through the application's index:
// exact match, then a unique case-insensitive one, else ErrAmbiguous.
package origin
