package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Style says how a subscriber followed the relay, and so how it is sent
// what others post.
type Style string

const (
	// StyleMastodon followed the Public collection; activities are
	// forwarded to it as they came.
	StyleMastodon Style = "mastodon"
	// StyleLitePub followed the relay actor (Pleroma, Akkoma, Misskey);
	// posts reach it wrapped in the relay's Announce.
	StyleLitePub Style = "litepub"
)

// State is a subscription's state.
type State string

const (
	// StateActive subscriptions send and receive.
	StateActive State = "active"
	// StatePending subscriptions wait for the operator's approval.
	StatePending State = "pending"
)

// Subscriber is one server subscribed to the relay, through one actor
// (usually its instance actor).
type Subscriber struct {
	Actor    string    `json:"actor"`
	Inbox    string    `json:"inbox"`
	Host     string    `json:"host"`
	Style    Style     `json:"style"`
	FollowID string    `json:"follow_id"`
	State    State     `json:"state"`
	Since    time.Time `json:"since"`
}

// Validate reports a subscriber a store must not keep.
func (s Subscriber) Validate() error {
	switch {
	case s.Actor == "":
		return fmt.Errorf("%w: empty actor", ErrInvalid)
	case s.Inbox == "":
		return fmt.Errorf("%w: empty inbox", ErrInvalid)
	case s.Style != StyleMastodon && s.Style != StyleLitePub:
		return fmt.Errorf("%w: style %q", ErrInvalid, s.Style)
	case s.State != StateActive && s.State != StatePending:
		return fmt.Errorf("%w: state %q", ErrInvalid, s.State)
	}
	return nil
}

// ErrInvalid is returned by Put for a subscriber that fails Validate.
var ErrInvalid = errors.New("store: invalid subscriber")

// Store keeps subscribers. Implementations are safe for concurrent use.
type Store interface {
	// Put adds or replaces the subscriber with s.Actor.
	Put(ctx context.Context, s Subscriber) error
	// Get returns the subscriber with actor, and false if there is none.
	Get(ctx context.Context, actor string) (Subscriber, bool, error)
	// Delete removes actor's subscription and reports whether there was one.
	Delete(ctx context.Context, actor string) (bool, error)
	// List returns every subscriber, ordered by actor.
	List(ctx context.Context) ([]Subscriber, error)
}
