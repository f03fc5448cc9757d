package fetch

import (
	"context"
	"fmt"
	"strings"
)

// WebFingerer answers WebFinger queries. *Fetcher satisfies it; wrap it to
// add a cache of your own and pass that to ResolveWith or ConfirmWith.
type WebFingerer interface {
	// WebFinger asks handle's host about it and returns the answer.
	WebFinger(ctx context.Context, handle string) (*JRD, error)
}

var _ WebFingerer = (*Fetcher)(nil)

// Resolved is a handle resolved to its actor.
type Resolved struct {
	// Handle is the canonical handle, in the spelling the host's subject gives.
	Handle Address
	// Actor is the href of the first ActivityPub self link.
	Actor string
	// Actors are all ActivityPub self links with their types.
	Actors []ActorLink
}

// Resolve resolves a handle as Mastodon's ResolveAccountService does before
// it fetches the actor; see ResolveWith.
func (f *Fetcher) Resolve(ctx context.Context, handle string) (*Resolved, error) {
	return ResolveWith(ctx, f, handle)
}

// Confirm resolves a handle and requires it to name expectedActor; see
// ConfirmWith.
func (f *Fetcher) Confirm(ctx context.Context, handle, expectedActor string) (*Resolved, error) {
	return ConfirmWith(ctx, f, handle, expectedActor)
}

// ResolveWith resolves a handle through wf: the answer must have a subject
// of exactly user@host and an ActivityPub self link. When the subject names
// the handle asked for (case-insensitively) its spelling is adopted;
// otherwise the subject is asked about once, and its answer must name
// itself. A 410 Gone comes back as a *StatusError matching ErrGone. The
// actor is not fetched: Lookup it to establish it.
func ResolveWith(ctx context.Context, wf WebFingerer, handle string) (*Resolved, error) {
	return resolve(ctx, wf, handle, false)
}

// ConfirmWith is ResolveWith that also requires the actor named to be
// expectedActor, as Mastodon checks an actor's handle before believing it,
// and reads a subject by its first two parts, as Mastodon does there.
func ConfirmWith(ctx context.Context, wf WebFingerer, handle, expectedActor string) (*Resolved, error) {
	r, err := resolve(ctx, wf, handle, true)
	if err != nil {
		return nil, err
	}
	if r.Actor != expectedActor {
		return nil, fmt.Errorf("%w: %s names %s", ErrActorMismatch, r.Handle, clip(r.Actor))
	}
	return r, nil
}

func resolve(ctx context.Context, wf WebFingerer, handle string, firstTwo bool) (*Resolved, error) {
	want, err := ParseAddress(handle)
	if err != nil {
		return nil, err
	}
	j, err := wf.WebFinger(ctx, want.String())
	if err != nil {
		return nil, err
	}
	subj, err := splitSubject(j.Subject, firstTwo)
	if err != nil {
		return nil, err
	}
	if !sameAddress(subj, want) {
		// The host says the account is known by another handle: ask that
		// handle's host once, and it must name itself.
		j, err = wf.WebFinger(ctx, subj.String())
		if err != nil {
			return nil, err
		}
		again, err := splitSubject(j.Subject, firstTwo)
		if err != nil {
			return nil, err
		}
		if !sameAddress(again, subj) {
			return nil, fmt.Errorf("%w: %s redirects to %s", ErrSubject, subj, again)
		}
		subj = again
	}
	actors := j.Actors()
	if len(actors) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoActor, subj)
	}
	return &Resolved{Handle: subj, Actor: actors[0].Href, Actors: actors}, nil
}

// splitSubject reads "acct:user@host" (or "user@host"): exactly two parts,
// or with firstTwo the first two of any more.
func splitSubject(s string, firstTwo bool) (Address, error) {
	s = strings.TrimPrefix(s, "acct:")
	parts := strings.Split(s, "@")
	if len(parts) < 2 || (!firstTwo && len(parts) != 2) || parts[0] == "" {
		return Address{}, fmt.Errorf("%w: subject %s", ErrSubject, clip(s))
	}
	a, err := ParseAddress(parts[0] + "@" + parts[1])
	if err != nil {
		return Address{}, fmt.Errorf("%w: subject %s", ErrSubject, clip(s))
	}
	return a, nil
}

func sameAddress(a, b Address) bool {
	return strings.EqualFold(a.User, b.User) && strings.EqualFold(a.Host, b.Host)
}
