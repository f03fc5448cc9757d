package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fedkit/fedkit/origin"
)

// IdentityEvent is a Jetstream #identity event. Handle is carried for
// logging only: the Refresher never trusts it.
type IdentityEvent struct {
	// DID is the event's repository DID, as sent.
	DID string
	// Seq is the event's sequence number.
	Seq int64
	// Time is when the event was emitted.
	Time time.Time
	// Handle is the event's handle, for logs only.
	Handle string
}

// ErrNotIdentityEvent is returned by DecodeIdentityEvent for a frame of
// another kind.
var ErrNotIdentityEvent = errors.New("identity: not an identity event")

// maxFrameBytes bounds what DecodeIdentityEvent parses; identity frames are
// a few hundred bytes.
const maxFrameBytes = 64 << 10

// DecodeIdentityEvent decodes a Jetstream v1 frame of kind "identity". A
// frame of another kind is ErrNotIdentityEvent; a malformed one is an error
// the consumer should treat as permanent.
func DecodeIdentityEvent(frame []byte) (IdentityEvent, error) {
	if len(frame) > maxFrameBytes {
		return IdentityEvent{}, errors.New("identity: frame too large")
	}
	var env struct {
		DID      string `json:"did"`
		Kind     string `json:"kind"`
		Identity *struct {
			DID    string `json:"did"`
			Seq    int64  `json:"seq"`
			Time   string `json:"time"`
			Handle string `json:"handle"`
		} `json:"identity"`
	}
	if err := json.Unmarshal(frame, &env); err != nil {
		return IdentityEvent{}, fmt.Errorf("identity: malformed frame: %w", err)
	}
	if env.Kind != "identity" {
		return IdentityEvent{}, ErrNotIdentityEvent
	}
	if env.Identity == nil {
		return IdentityEvent{}, errors.New("identity: identity frame without body")
	}
	ev := IdentityEvent{DID: env.Identity.DID, Seq: env.Identity.Seq, Handle: env.Identity.Handle}
	if ev.DID == "" {
		ev.DID = env.DID
	}
	if env.DID != "" && env.DID != ev.DID {
		return IdentityEvent{}, errors.New("identity: envelope and body name different DIDs")
	}
	if env.Identity.Time != "" {
		t, err := time.Parse(time.RFC3339Nano, env.Identity.Time)
		if err != nil {
			return IdentityEvent{}, fmt.Errorf("identity: bad time: %w", err)
		}
		ev.Time = t
	}
	return ev, nil
}

// HandleIdentityEvent applies one identity event, for users and communities
// alike. The DID is looked up in the Store first: an unknown DID costs that
// one read, no resolver call, and returns nil. A known DID is refreshed with
// RefreshHandle whatever the event says about its handle, present or not.
// A malformed DID is permanent.
func (r *Refresher) HandleIdentityEvent(ctx context.Context, ev IdentityEvent) error {
	did, err := ParseDID(ev.DID)
	if err != nil {
		return permanent(DID(ev.DID), ReasonInvalidDID, err)
	}
	if _, err := r.store.Subject(ctx, did); err != nil {
		if errors.Is(err, ErrUnknownDID) {
			return nil
		}
		return unresolved(did, ReasonStoreFailed, err)
	}
	_, err = r.refresh(ctx, did, r.bridge, triggerEvent)
	return err
}

// AccountEvent is a Jetstream #account event.
type AccountEvent struct {
	// DID is the event's repository DID, as sent.
	DID string
	// Seq is the event's sequence number.
	Seq int64
	// Time is when the event was emitted.
	Time time.Time
	// Active says whether the account is active.
	Active bool
	Status string // set only when Active is false: "takendown", "deleted", ...
}

// HandleAccountEvent applies one account event. An unknown DID costs one
// read. A known account that was deleted or taken down (see
// origin.ClearOnAccountStatus) has its cache entries purged and, under the
// per-DID lock, its origin fields cleared; other statuses change nothing.
// Errors are *RefreshError, classed as for RefreshHandle.
func (r *Refresher) HandleAccountEvent(ctx context.Context, ev AccountEvent) error {
	did, err := ParseDID(ev.DID)
	if err != nil {
		return permanent(DID(ev.DID), ReasonInvalidDID, err)
	}
	s, err := r.store.Subject(ctx, did)
	if err != nil {
		if errors.Is(err, ErrUnknownDID) {
			return nil
		}
		return unresolved(did, ReasonStoreFailed, err)
	}
	if ev.Active || !origin.ClearOnAccountStatus(ev.Status) {
		return nil
	}
	if r.cfg.Lock == nil || r.cfg.Lock.Wait() <= 0 {
		return unresolved(did, ReasonLockUnavailable, ErrLockUnavailable)
	}
	if r.cfg.Cache != nil {
		if err := r.cfg.Cache.Purge(ctx, did); err != nil {
			return unresolved(did, ReasonPurgeFailed, err)
		}
		if !s.Handle.IsZero() {
			if err := r.cfg.Cache.PurgeHandle(ctx, s.Handle); err != nil {
				return unresolved(did, ReasonPurgeFailed, err)
			}
		}
	}
	err = r.cfg.Lock.WithLock(ctx, did, func(ctx context.Context) error {
		s, err := r.store.Subject(ctx, did)
		if errors.Is(err, ErrUnknownDID) {
			return nil // gone already: nothing left to clear
		}
		if err != nil {
			return unresolved(did, ReasonStoreFailed, err)
		}
		if !s.HasOrigin {
			return nil
		}
		if err := r.store.ClearOrigin(ctx, s, origin.ClearAll()); err != nil {
			return unresolved(did, ReasonStoreFailed, err)
		}
		return nil
	})
	if err != nil {
		return r.lockError(ctx, did, err)
	}
	return nil
}
