package origin

import (
	"context"
	"strings"
)

// CommunityFields are the origin fields of a community profile. A
// community has no user name: its origin is the server it comes from.
type CommunityFields struct {
	// Origin is the origin domain ("lemmy.world").
	Origin string
	// URL is the community's URL on the origin.
	URL string
	// Software is the origin's software ("lemmy").
	Software string
}

// IsZero reports whether no field is set.
func (f CommunityFields) IsZero() bool { return f == CommunityFields{} }

// SanitizeCommunity applies the origin-field rules of Sanitize to a
// community, with a Rejection for every asserted field dropped:
//
//   - Origin is normalised with NormalizeDomain (whether the repository may
//     claim it is AdmitCommunity's question);
//   - URL must pass Sanitize's URL rules against the kept origin;
//   - Software must pass SanitizeSoftware and is kept only beside a kept
//     origin: it describes the origin's server, and without one it would let
//     any repository label itself with a server software.
//
// It drops fields, never the record, and is idempotent.
func SanitizeCommunity(in CommunityFields) (CommunityFields, []Rejection) {
	var out CommunityFields
	var rej []Rejection
	drop := func(f Field, r RejectReason) { rej = append(rej, Rejection{f, r}) }
	if in.Origin != "" {
		if d, err := NormalizeDomain(in.Origin); err != nil {
			drop(FieldOrigin, RejectInvalidDomain)
		} else {
			out.Origin = d
		}
	}
	if in.URL != "" {
		if r := checkOriginURL(in.URL, out.Origin); r != "" {
			drop(FieldURL, r)
		} else {
			out.URL = in.URL
		}
	}
	if in.Software != "" {
		s, ok := SanitizeSoftware(in.Software)
		switch {
		case !ok:
			drop(FieldSoftware, RejectInvalidSoftware)
		case out.Origin == "":
			drop(FieldSoftware, RejectNoOrigin)
		default:
			out.Software = s
		}
	}
	return out, rej
}

// ReasonOriginNotAllowed: the community asserted an origin its repository
// may not claim (see CommunityOrigin).
const ReasonOriginNotAllowed Reason = "origin-not-allowed"

// CommunityEvent is a community profile event as AdmitCommunity needs it.
type CommunityEvent struct {
	// DID is the community's repository.
	DID string
	// Fields are the origin fields as the record asserts them, unsanitised.
	Fields CommunityFields
	// Known says whether the application already has a row for DID.
	Known bool
}

// CommunityDecision is the result of AdmitCommunity.
type CommunityDecision struct {
	// Outcome says what the application does with the event, as for Admit.
	Outcome Outcome
	// Write is what to store for OutcomeAdmit and OutcomeClear. Its
	// Username is always nil: communities have no such column.
	Write Write
	// Reason explains the outcome.
	Reason Reason
	// Rejected lists asserted fields that SanitizeCommunity dropped.
	Rejected []Rejection
	// Err is the transient cause of OutcomeRetry.
	Err error
	// Bridged reports that this event's fresh resolution found the
	// repository on a trusted bridge PDS under the handle's registrable
	// domain, with the handle verified both ways.
	Bridged bool
	// PDS is the PDS URL of this event's fresh resolution of the right
	// DID, "" when none was made or it failed. Store it over the row's
	// stored PDS URL, which selects rows for the sweep.
	PDS string
	// Resolution is the fresh resolution the decision was made on, as for
	// Decision.Resolution.
	Resolution *Resolution
}

// AdmitCommunity decides, for the event being processed, which origin
// fields a community profile may store. It resolves the DID fresh, like
// Admit, and then applies the community rule (CommunityOrigin):
//
//   - a repository on a trusted bridge PDS, with a handle under the PDS's
//     registrable domain verified both ways, may assert any well-formed
//     origin except a public suffix;
//   - any other repository only its verified handle's registrable domain or
//     a parent of the handle below it.
//
// Outcomes follow Admit: a record asserting nothing (or nothing valid)
// needs no resolution and clears a known row; an origin the repository may
// not claim, an unresolvable DID or another DID's document clears a known
// row and drops an unknown one's event; a transient failure, or a handle
// not verified both ways when verification could still admit the origin,
// retries. URL and Software are stored only with an admitted origin.
func (a *Admitter) AdmitCommunity(ctx context.Context, ev CommunityEvent) CommunityDecision {
	clean, rej := SanitizeCommunity(ev.Fields)
	lg := Event{DID: ev.DID, Fields: Fields{Origin: ev.Fields.Origin, URL: ev.Fields.URL, Software: ev.Fields.Software}, Known: ev.Known}
	if clean.Origin == "" {
		// SanitizeCommunity keeps URL and Software only beside an origin.
		reason := ReasonNotAsserted
		if !ev.Fields.IsZero() {
			reason = ReasonNothingValid
		}
		switch {
		case ev.Known:
			return a.loggedCommunity(lg, CommunityDecision{Outcome: OutcomeClear, Write: communityClear(), Reason: reason, Rejected: rej})
		case ev.Fields.IsZero():
			return CommunityDecision{Outcome: OutcomeAdmit, Reason: reason}
		}
		return a.loggedCommunity(lg, CommunityDecision{Outcome: OutcomeAdmit, Write: communityClear(), Reason: reason, Rejected: rej})
	}

	res, reason, err := a.resolve(ctx, ev.DID)
	switch {
	case reason == ReasonUnresolvable:
		return a.refuseCommunity(lg, CommunityDecision{Reason: reason, Rejected: rej})
	case err != nil:
		return a.loggedCommunity(lg, CommunityDecision{Outcome: OutcomeRetry, Reason: reason, Rejected: rej, Err: err})
	}
	if res.DID != ev.DID {
		return a.refuseCommunity(lg, CommunityDecision{Reason: ReasonSubjectMismatch, Rejected: rej})
	}
	d := CommunityDecision{Rejected: rej, PDS: res.PDS, Resolution: &res}
	handle := strings.TrimSuffix(strings.ToLower(strings.TrimPrefix(res.Handle, "at://")), ".")
	switch r := a.judge(res); r {
	case "":
		d.Bridged = true
	case ReasonHandleUnverified:
		// On the bridge's PDS under its domain: verification would admit.
		d.Outcome, d.Reason = OutcomeRetry, r
		return a.loggedCommunity(lg, d)
	}
	if !d.Bridged && (handle == "" || handle == "handle.invalid") {
		// No handle to judge the origin by yet, as for Admit.
		d.Outcome, d.Reason = OutcomeRetry, ReasonHandleUnverified
		return a.loggedCommunity(lg, d)
	}
	o, err := CommunityOrigin(clean.Origin, handle, d.Bridged)
	if err != nil {
		// Checked against the declared handle before verification: no
		// verification of this handle could allow this origin.
		d.Reason = ReasonOriginNotAllowed
		return a.refuseCommunity(lg, d)
	}
	if !d.Bridged && res.HandleDID != res.DID {
		d.Outcome, d.Reason = OutcomeRetry, ReasonHandleUnverified
		return a.loggedCommunity(lg, d)
	}
	d.Outcome, d.Reason = OutcomeAdmit, ReasonAdmitted
	d.Write = Write{Origin: &o, URL: &clean.URL, Software: &clean.Software}
	if len(rej) > 0 {
		return a.loggedCommunity(lg, d)
	}
	return d
}

// communityClear clears the three community origin columns.
func communityClear() Write {
	w := ClearAll()
	w.Username = nil
	return w
}

func (a *Admitter) refuseCommunity(ev Event, d CommunityDecision) CommunityDecision {
	if ev.Known {
		d.Outcome, d.Write = OutcomeClear, communityClear()
	} else {
		d.Outcome, d.Write = OutcomeDrop, Write{}
	}
	return a.loggedCommunity(ev, d)
}

func (a *Admitter) loggedCommunity(ev Event, d CommunityDecision) CommunityDecision {
	if !ev.Fields.IsZero() {
		a.log.Info("community origin fields not admitted as asserted", "did", ev.DID, "outcome", d.Outcome.String(), "reason", string(d.Reason))
	}
	return d
}
