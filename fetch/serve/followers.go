package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"

	"github.com/fedkit/fedkit/fetch"
	"github.com/fedkit/fedkit/sig/inbox"
)

// ErrNoInbox is returned by Followers when a follower's actor document
// names no http(s) inbox to send the Accept to.
var ErrNoInbox = errors.New("serve: actor has no inbox")

// Followers keeps a local actor's followers in memory and answers their
// Follows, as Mastodon does for an account that does not approve
// followers by hand: Receive wraps the inbox's receive function so that a
// Follow of the actor is recorded and answered with an Accept, and an
// Undo of it, or the follower's Delete of itself, forgets the follower.
// Inboxes lists where the actor's posts go. An actor that
// ManuallyApprovesFollowers gets no automatic Accepts. An application
// that keeps followers in a database writes its own with
// Actor.Activity("Accept", follow.Body). It is safe for concurrent use.
type Followers struct {
	// Outbox sends the Accepts as its Actor, whose followers these are.
	// Required.
	Outbox *Outbox
	// Actors looks a follower's actor document up for its inbox: usually
	// the application's *fetch.Fetcher. Required.
	Actors fetch.Lookuper

	mu sync.Mutex
	m  map[string]follower // by follower actor id
}

type follower struct{ follow, inbox, sharedInbox string }

// Receive returns a receive function for inbox.New that keeps the
// followers and then passes every activity, Follows included, to next
// (nil: none). An error looking a follower up or queueing the Accept is
// returned, so the inbox answers 500 and the follower's server retries.
func (f *Followers) Receive(next func(context.Context, *inbox.Activity) error) func(context.Context, *inbox.Activity) error {
	return func(ctx context.Context, a *inbox.Activity) error {
		if err := f.receive(ctx, a); err != nil {
			return err
		}
		if next == nil {
			return nil
		}
		return next(ctx, a)
	}
}

func (f *Followers) receive(ctx context.Context, a *inbox.Activity) error {
	if f.Outbox == nil || f.Outbox.Actor == nil || f.Actors == nil {
		return fmt.Errorf("%w: Followers needs an Outbox with an Actor, and Actors", ErrIncomplete)
	}
	me := f.Outbox.Actor
	switch {
	case a.Type == "Follow" && a.Object == me.ID && !me.ManuallyApprovesFollowers:
		fl, err := f.lookup(ctx, a.Actor)
		if err != nil {
			return err
		}
		fl.follow = a.ID
		f.mu.Lock()
		if f.m == nil {
			f.m = map[string]follower{}
		}
		f.m[a.Actor] = fl
		f.mu.Unlock()
		return f.Outbox.Send(ctx, me.Activity("Accept", a.Body), fl.inbox)
	case a.Type == "Undo":
		f.mu.Lock()
		if fl, ok := f.m[a.Actor]; ok && undoesFollow(a.Body, a.Actor, me.ID, fl.follow) {
			delete(f.m, a.Actor)
		}
		f.mu.Unlock()
	case a.Type == "Delete" && a.Object == a.Actor:
		f.mu.Lock()
		delete(f.m, a.Actor)
		f.mu.Unlock()
	}
	return nil
}

// lookup reads a follower's inboxes from its actor document.
func (f *Followers) lookup(ctx context.Context, actor string) (follower, error) {
	d, err := f.Actors.Lookup(ctx, actor)
	if err != nil {
		return follower{}, err
	}
	var doc struct {
		Inbox     string `json:"inbox"`
		Endpoints struct {
			SharedInbox string `json:"sharedInbox"`
		} `json:"endpoints"`
	}
	_ = d.Decode(&doc) // a member of another shape leaves its field empty
	if d.ID != actor || !isHTTPURL(doc.Inbox) {
		return follower{}, fmt.Errorf("%w: %s", ErrNoInbox, actor)
	}
	fl := follower{inbox: doc.Inbox}
	if isHTTPURL(doc.Endpoints.SharedInbox) {
		fl.sharedInbox = doc.Endpoints.SharedInbox
	}
	return fl, nil
}

// undoesFollow reports whether an Undo's body takes back actor's Follow
// of followed: its object is that Follow embedded (as Mastodon sends it)
// or the id of the Follow recorded.
func undoesFollow(body []byte, actor, followed, followID string) bool {
	var u struct{ Object json.RawMessage }
	if json.Unmarshal(body, &u) != nil {
		return false
	}
	var id string
	if json.Unmarshal(u.Object, &id) == nil {
		return id != "" && id == followID
	}
	var fw struct {
		ID, Type      string
		Actor, Object json.RawMessage
	}
	if json.Unmarshal(u.Object, &fw) != nil {
		return false
	}
	return (fw.ID != "" && fw.ID == followID) || (fw.Type == "Follow" && idOf(fw.Actor) == actor && idOf(fw.Object) == followed)
}

// idOf reads a member that is an id or an object with one.
func idOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct{ ID string }
	_ = json.Unmarshal(raw, &o)
	return o.ID
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// Has reports whether actor follows.
func (f *Followers) Has(actor string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.m[actor]
	return ok
}

// Inboxes returns where to deliver to every follower: each one's shared
// inbox when its server has one, else its inbox, each listed once, sorted.
func (f *Followers) Inboxes() []string {
	f.mu.Lock()
	var out []string
	for _, fl := range f.m {
		if fl.sharedInbox != "" {
			out = append(out, fl.sharedInbox)
		} else {
			out = append(out, fl.inbox)
		}
	}
	f.mu.Unlock()
	slices.Sort(out)
	return slices.Compact(out)
}
