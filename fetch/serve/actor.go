package serve

import (
	"crypto"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/fedkit/fedkit/sig"
)

// Contexts an actor document names.
const (
	ContextActivityStreams = "https://www.w3.org/ns/activitystreams"
	// ContextSecurity defines publicKey and publicKeyPem (Mastodon's keys).
	ContextSecurity = "https://w3id.org/security/v1"
	// ContextDataIntegrity and ContextMultikey define assertionMethod and
	// Multikey (FEP-521a), as Fedify names them.
	ContextDataIntegrity = "https://w3id.org/security/data-integrity/v1"
	ContextMultikey      = "https://w3id.org/security/multikey/v1"
)

// Actor types.
const (
	TypePerson      = "Person"
	TypeService     = "Service"
	TypeApplication = "Application"
	TypeGroup       = "Group"
)

// Actor is an ActivityPub actor document as servers publish it. Build one
// with NewActor; it marshals to JSON with the @context its members need.
type Actor struct {
	Context                   []any      `json:"@context"`
	ID                        string     `json:"id"`
	Type                      string     `json:"type"`
	PreferredUsername         string     `json:"preferredUsername,omitempty"`
	Name                      string     `json:"name,omitempty"`
	Summary                   string     `json:"summary,omitempty"`
	URL                       string     `json:"url,omitempty"`
	Inbox                     string     `json:"inbox"`
	Outbox                    string     `json:"outbox"`
	Followers                 string     `json:"followers,omitempty"`
	Following                 string     `json:"following,omitempty"`
	ManuallyApprovesFollowers bool       `json:"manuallyApprovesFollowers"`
	Endpoints                 *Endpoints `json:"endpoints,omitempty"`
	PublicKey                 *PublicKey `json:"publicKey,omitempty"`
	AssertionMethod           []Multikey `json:"assertionMethod,omitempty"`
}

// Endpoints are an actor's server-wide endpoints.
type Endpoints struct {
	SharedInbox string `json:"sharedInbox,omitempty"`
}

// PublicKey is Mastodon's publicKey member: the key HTTP signatures use.
type PublicKey struct {
	ID           string `json:"id"`
	Owner        string `json:"owner"`
	PublicKeyPem string `json:"publicKeyPem"`
}

// Multikey is an FEP-521a verification method in assertionMethod.
type Multikey struct {
	ID                 string `json:"id"`
	Type               string `json:"type"`
	Controller         string `json:"controller"`
	PublicKeyMultibase string `json:"publicKeyMultibase"`
}

// ActorKey is a public key and the id it is published under.
type ActorKey struct {
	// ID is the key's id, "actor#main-key". Defaults per field below.
	ID string
	// Public is an RSA, Ed25519 or P-256 public key.
	Public crypto.PublicKey
}

// ActorOpts describes an actor for NewActor.
type ActorOpts struct {
	// ID is the actor's absolute http(s) URL. Required.
	ID string
	// Type is Person, Service, Application or Group. Defaults to Person.
	Type string
	// Username is preferredUsername, the user part of the handle.
	Username string
	// Name, Summary and URL (the profile page) are shown by servers.
	Name, Summary, URL string
	// Inbox, Outbox, Followers and Following default to ID + "/inbox",
	// "/outbox", "/followers", "/following".
	Inbox, Outbox, Followers, Following string
	// SharedInbox is endpoints.sharedInbox. Defaults to none.
	SharedInbox string
	// ManuallyApprovesFollowers says Follows become requests.
	ManuallyApprovesFollowers bool
	// Key is published as publicKey with publicKeyPem, what Mastodon and
	// every server read for HTTP signatures; its ID defaults to
	// ID + "#main-key". Defaults to none.
	Key *ActorKey
	// AssertionKeys are published as FEP-521a Multikeys in
	// assertionMethod (Ed25519 keys for Data Integrity proofs); their IDs
	// default to ID + "#ed25519-key", "#ed25519-key-2", and so on.
	AssertionKeys []ActorKey
}

// NewActor builds an actor document from opts.
func NewActor(opts *ActorOpts) (*Actor, error) {
	if opts == nil || opts.ID == "" {
		return nil, errors.New("serve: NewActor needs an ID")
	}
	if u, err := url.Parse(opts.ID); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
		return nil, fmt.Errorf("serve: actor ID %q is not an absolute http(s) URL", opts.ID)
	}
	a := &Actor{
		ID: opts.ID, Type: opts.Type, PreferredUsername: opts.Username, Name: opts.Name, Summary: opts.Summary, URL: opts.URL,
		Inbox: or(opts.Inbox, opts.ID+"/inbox"), Outbox: or(opts.Outbox, opts.ID+"/outbox"),
		Followers: or(opts.Followers, opts.ID+"/followers"), Following: or(opts.Following, opts.ID+"/following"),
		ManuallyApprovesFollowers: opts.ManuallyApprovesFollowers,
	}
	switch a.Type {
	case "":
		a.Type = TypePerson
	case TypePerson, TypeService, TypeApplication, TypeGroup:
	default:
		return nil, fmt.Errorf("serve: actor type %q", a.Type)
	}
	if opts.SharedInbox != "" {
		a.Endpoints = &Endpoints{SharedInbox: opts.SharedInbox}
	}
	a.Context = []any{ContextActivityStreams}
	if k := opts.Key; k != nil {
		pem, err := sig.MarshalPublicKeyPEM(k.Public)
		if err != nil {
			return nil, fmt.Errorf("serve: actor key: %w", err)
		}
		a.PublicKey = &PublicKey{ID: or(k.ID, opts.ID+"#main-key"), Owner: opts.ID, PublicKeyPem: string(pem)}
		a.Context = append(a.Context, ContextSecurity)
	}
	for i, k := range opts.AssertionKeys {
		mk, err := sig.FormatMultikey(k.Public)
		if err != nil {
			return nil, fmt.Errorf("serve: assertion key %d: %w", i, err)
		}
		id := opts.ID + "#ed25519-key"
		if i > 0 {
			id = fmt.Sprintf("%s-%d", id, i+1)
		}
		a.AssertionMethod = append(a.AssertionMethod, Multikey{ID: or(k.ID, id), Type: "Multikey", Controller: opts.ID, PublicKeyMultibase: mk})
	}
	if len(a.AssertionMethod) > 0 {
		a.Context = append(a.Context, ContextDataIntegrity, ContextMultikey)
	}
	a.Context = append(a.Context, map[string]any{"manuallyApprovesFollowers": "as:manuallyApprovesFollowers"})
	return a, nil
}

// KeyID returns the publicKey's id, "" without one: the key ID to sign
// with.
func (a *Actor) KeyID() string {
	if a.PublicKey == nil {
		return ""
	}
	return a.PublicKey.ID
}

// ServeHTTP writes the actor as ActivityStreams JSON.
func (a *Actor) ServeHTTP(w http.ResponseWriter, r *http.Request) { WriteJSON(w, http.StatusOK, a) }

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
