package serve

import (
	"crypto/rand"
	"encoding/json"
	"time"
)

// Public is the collection that addresses everyone: a public post's to.
const Public = "https://www.w3.org/ns/activitystreams#Public"

// Activity is an activity as a server sends it. Build one with
// Actor.Activity; it marshals to JSON ready for delivery.
type Activity struct {
	Context string   `json:"@context"`
	ID      string   `json:"id"`
	Type    string   `json:"type"`
	Actor   string   `json:"actor"`
	Object  any      `json:"object,omitempty"`
	To      []string `json:"to,omitempty"`
	Cc      []string `json:"cc,omitempty"`
}

// Object is an ActivityStreams object an actor publishes, such as the
// Note that Actor.Note builds, embedded in the activity that carries it.
type Object struct {
	ID           string    `json:"id"`
	Type         string    `json:"type"`
	AttributedTo string    `json:"attributedTo"`
	Content      string    `json:"content,omitempty"`
	InReplyTo    string    `json:"inReplyTo,omitempty"`
	Published    time.Time `json:"published,omitzero"`
	To           []string  `json:"to,omitempty"`
	Cc           []string  `json:"cc,omitempty"`
}

// Activity returns an activity of type typ ("Follow", "Accept", "Create",
// ...) by a on object: an object's id, an *Object, or the JSON of the
// activity it answers (an inbox.Activity's Body, for an Accept; a []byte
// is taken as JSON too, not as bytes to encode). Its id is
// fresh, under a's ID. An *Object's to and cc are copied, since Mastodon
// reads a Create's addressing from the activity and expects it to be its
// object's.
func (a *Actor) Activity(typ string, object any) *Activity {
	if b, ok := object.([]byte); ok {
		object = json.RawMessage(b)
	}
	act := &Activity{Context: ContextActivityStreams, ID: a.mint("activities"), Type: typ, Actor: a.ID, Object: object}
	if o, ok := object.(*Object); ok {
		if o == nil {
			act.Object = nil // a typed nil would marshal as null
		} else {
			act.To, act.Cc = o.To, o.Cc
		}
	}
	return act
}

// Note returns a public Note by a with content (HTML, as servers render
// it): a fresh id under a's ID, to Public and cc a's followers, as
// Mastodon addresses a public post. Set Published or InReplyTo on it as
// needed; servers date a Note without Published by its arrival.
func (a *Actor) Note(content string) *Object {
	o := &Object{ID: a.mint("notes"), Type: "Note", AttributedTo: a.ID, Content: content, To: []string{Public}}
	if a.Followers != "" {
		o.Cc = []string{a.Followers}
	}
	return o
}

// mint returns a new id under a's ID: unguessable, so nobody can claim an
// id before the actor uses it.
func (a *Actor) mint(kind string) string { return a.ID + "/" + kind + "/" + rand.Text() }
