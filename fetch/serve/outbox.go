package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Sender queues an activity for signed delivery to inboxes;
// *deliver.Deliverer is one.
type Sender interface {
	Send(ctx context.Context, keyID string, activity []byte, inboxes []string) error
}

// ErrIncomplete is returned when an Outbox or a Followers lacks a field it
// requires.
var ErrIncomplete = errors.New("serve: required field not set")

// Outbox sends what a local actor does: each activity signed with the
// actor's key (its KeyID) and queued through Sender. Its zero value sends
// nothing; set both fields.
type Outbox struct {
	// Actor is the local actor. Required.
	Actor *Actor
	// Sender queues the deliveries, usually a *deliver.Deliverer whose
	// SenderKeys holds the actor's key. Required.
	Sender Sender
}

// Send queues act to inboxes.
func (o *Outbox) Send(ctx context.Context, act *Activity, inboxes ...string) error {
	if o.Actor == nil || o.Sender == nil {
		return fmt.Errorf("%w: Outbox needs an Actor and a Sender", ErrIncomplete)
	}
	b, err := json.Marshal(act)
	if err != nil {
		return fmt.Errorf("serve: encoding %s: %w", act.Type, err)
	}
	return o.Sender.Send(ctx, o.Actor.KeyID(), b, inboxes)
}
