package directory

import (
	"context"
	"time"
)

// EntryStatus is one line of `relay directory status` without an origin.
type EntryStatus struct {
	// Origin and Enabled are the configured entry.
	Origin  string
	Enabled bool
	// State is one of the six bounded local states.
	State State
	// Record is the persisted scheduler state (zero without a store).
	Record StateRecord
}

// LocalState derives the bounded local state of one entry from its
// configuration and persisted record.
func LocalState(e Entry, rec StateRecord, now time.Time) State {
	switch {
	case rec.State == StateUnregisterPending:
		return StateUnregisterPending
	case !e.Enabled || rec.State == StateDisabled:
		return StateDisabled
	case rec.State == StateRetrying:
		return StateRetrying
	case rec.Registered && rec.Operation == OpHeartbeat && now.Before(rec.NextHeartbeat):
		return StateHeartbeatCurrent
	case rec.Registered:
		return StateRegistered
	}
	return StateConfigured
}

// LocalStatus reports every configured entry. Without a store (no Redis)
// states come from the configuration alone.
func LocalStatus(ctx context.Context, entries []Entry, store StateStore, now time.Time) ([]EntryStatus, error) {
	out := make([]EntryStatus, 0, len(entries))
	for _, e := range entries {
		var rec StateRecord
		if store != nil {
			var err error
			if rec, err = store.Load(ctx, e.Origin); err != nil {
				return nil, err
			}
		}
		out = append(out, EntryStatus{Origin: e.Origin, Enabled: e.Enabled, State: LocalState(e, rec, now), Record: rec})
	}
	return out, nil
}
