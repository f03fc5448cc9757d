package inbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/fedkit/fedkit/sig"
)

// Trust says how the inbox established that an activity is its actor's.
type Trust uint8

// How an activity was established.
const (
	// TrustSignature: the HTTP signature's key belongs to the actor.
	TrustSignature Trust = iota + 1
	// TrustLDSignature: a Linked Data Signature (RsaSignature2017) by the
	// actor's key, for an activity forwarded or relayed by someone else.
	TrustLDSignature
	// TrustProof: a Data Integrity proof (eddsa-jcs-2022) by the actor's
	// key.
	TrustProof
	// TrustRefetch: the activity as its id's origin, the actor's, serves
	// it; Activity.Body is that copy, not what was posted.
	TrustRefetch
	// TrustGone: a Delete of its own actor, whose key or actor answered
	// 410 Gone on the actor's origin. No signature could be checked: the
	// origin's 410 is what says the account is gone, as Mastodon takes it.
	TrustGone
)

var trustText = [...]string{
	TrustSignature:   "signature",
	TrustLDSignature: "ld-signature",
	TrustProof:       "proof",
	TrustRefetch:     "refetch",
	TrustGone:        "gone",
}

// String names the trust path.
func (t Trust) String() string {
	if int(t) < len(trustText) && trustText[t] != "" {
		return trustText[t]
	}
	return "unknown"
}

// Activity is an accepted activity, tied to its actor.
type Activity struct {
	// Body is the activity's JSON: as posted, or for TrustRefetch as its
	// origin served it.
	Body json.RawMessage
	// ID, Type, Actor and Object (the object's id) are read from Body.
	ID, Type, Actor, Object string
	// Signature is the verified HTTP signature; nil for TrustGone.
	Signature *sig.Result
	// Trust says how the activity was tied to Actor.
	Trust Trust
	// VouchedBy is the key that established the activity: the HTTP
	// signature's for TrustSignature, the LD signature's or the proof's
	// verification method otherwise; the signature's key for TrustGone.
	VouchedBy sig.KeyID
}

// Decode unmarshals Body into v.
func (a *Activity) Decode(v any) error { return json.Unmarshal(a.Body, v) }

// head is what the inbox reads of an activity.
type head struct {
	ID        string          `json:"id"`
	Type      json.RawMessage `json:"type"`
	Actor     json.RawMessage `json:"actor"`
	Object    json.RawMessage `json:"object"`
	Signature json.RawMessage `json:"signature"`
	Proof     json.RawMessage `json:"proof"`
}

var errNotActivity = errors.New("inbox: not an activity")

// parseActivity reads the head of body: a JSON object with a type and
// exactly one actor IRI.
func parseActivity(body []byte) (*head, *Activity, error) {
	b := bytes.TrimLeft(body, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return nil, nil, errNotActivity
	}
	var h head
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, nil, errNotActivity
	}
	a := &Activity{Body: body, ID: h.ID, Type: firstString(h.Type), Actor: iri(h.Actor), Object: iri(h.Object)}
	if a.Type == "" || a.Actor == "" {
		return nil, nil, errNotActivity
	}
	return &h, a, nil
}

// iri reads a property holding one IRI: a string or an object's id.
func iri(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		ID string `json:"id"`
	}
	if raw[0] == '{' && json.Unmarshal(raw, &o) == nil {
		return o.ID
	}
	return ""
}

func firstString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var a []string
	if json.Unmarshal(raw, &a) == nil && len(a) > 0 {
		return a[0]
	}
	return ""
}

// sameOrigin reports whether a and b are absolute http(s) URLs with one
// scheme and host (port included, case-insensitive).
func sameOrigin(a, b string) bool {
	ua, err := url.Parse(a)
	if err != nil || (ua.Scheme != "https" && ua.Scheme != "http") || ua.Host == "" {
		return false
	}
	ub, err := url.Parse(b)
	if err != nil {
		return false
	}
	return ua.Scheme == ub.Scheme && strings.EqualFold(ua.Host, ub.Host)
}
