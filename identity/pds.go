package identity

import "context"

// PDSSetter is an optional extension of Store. When the Store implements
// it, a refresh that verified the DID's handle calls SetPDS inside the
// per-DID lock whenever the fresh DID document names another PDS than the
// Subject's stored one, so the stored PDS URL follows the repository: a
// DID that left the bridge stops being selected by Sweep, whose rows come
// from the stored PDS. pds is the document's #atproto_pds endpoint as
// resolved, "" when it names none.
//
// A refresh whose handle does not verify writes nothing, the PDS included.
type PDSSetter interface {
	// SetPDS stores pds as s's PDS URL.
	SetPDS(ctx context.Context, s Subject, pds string) error
}

// setPDS records id's PDS for s through the Store's optional PDSSetter.
// It runs inside the per-DID lock, after the handle and origin writes, so
// a failure redrives the event and the retry finds the rest already done.
func (r *Refresher) setPDS(ctx context.Context, s Subject, id *Identity) error {
	ps, ok := r.store.(PDSSetter)
	if !ok || id == nil || id.PDS == s.PDS {
		return nil
	}
	if err := ps.SetPDS(ctx, s, id.PDS); err != nil {
		return unresolved(s.DID, ReasonStoreFailed, err)
	}
	return nil
}
