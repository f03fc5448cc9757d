package fetch

import (
	"bytes"
	"crypto"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/fedkit/fedkit/origin"
	"github.com/fedkit/fedkit/sig"
)

// keyEntry is one key as an actor or key document writes it: a publicKey
// (Mastodon, Misskey, Pleroma, GoToSocial) or an FEP-521a Multikey in
// assertionMethod. A bare IRI names a key without its material.
type keyEntry struct {
	ID                 string `json:"id"`
	Owner              string `json:"owner"`
	Controller         string `json:"controller"`
	PublicKeyPem       string `json:"publicKeyPem"`
	PublicKeyMultibase string `json:"publicKeyMultibase"`
}

// keyDoc is what the key resolver reads of a fetched document: an actor
// listing keys, or a stand-alone key document (GoToSocial's actor/main-key)
// naming its owner.
type keyDoc struct {
	keyEntry
	PublicKey json.RawMessage `json:"publicKey"`
	// AdditionalPublicKeys is Misskey's: its Ed25519 key (for
	// ed25519-sha512 signatures) beside the RSA publicKey.
	AdditionalPublicKeys json.RawMessage `json:"additionalPublicKeys"`
	AssertionMethod      json.RawMessage `json:"assertionMethod"`
}

// owner is who the entry says it belongs to: owner, or a Multikey's
// controller.
func (k *keyEntry) owner() string {
	if k.Owner != "" {
		return k.Owner
	}
	return k.Controller
}

// hasMaterial reports a key carrying a PEM or a Multikey value.
func (k *keyEntry) hasMaterial() bool {
	return strings.TrimSpace(k.PublicKeyPem) != "" || k.PublicKeyMultibase != ""
}

// public parses the key material: PEM first, as Mastodon publishes it.
func (k *keyEntry) public() (crypto.PublicKey, error) {
	if strings.TrimSpace(k.PublicKeyPem) != "" {
		return sig.ParsePublicKeyPEM([]byte(k.PublicKeyPem))
	}
	if k.PublicKeyMultibase != "" {
		return sig.ParseMultikey(k.PublicKeyMultibase)
	}
	return nil, fmt.Errorf("%w: key %s has no material", ErrNoKey, clip(k.ID))
}

// parseKeyDoc decodes a key or actor document.
func parseKeyDoc(raw []byte) (*keyDoc, error) {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("%w: key document is not a JSON object", ErrMalformed)
	}
	var d keyDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("%w: key document: %v", ErrMalformed, err)
	}
	return &d, nil
}

// keys lists the keys d publishes: publicKey (an object, an array, or IRIs),
// additionalPublicKeys, then assertionMethod. Malformed members are
// skipped, so one odd entry does not hide the key asked for.
func (d *keyDoc) keys() []keyEntry {
	var out []keyEntry
	for _, raw := range []json.RawMessage{d.PublicKey, d.AdditionalPublicKeys, d.AssertionMethod} {
		out = appendEntries(out, raw)
	}
	return out
}

func appendEntries(out []keyEntry, raw json.RawMessage) []keyEntry {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return out
	}
	switch raw[0] {
	case '[':
		var a []json.RawMessage
		if json.Unmarshal(raw, &a) == nil {
			for _, e := range a {
				if len(bytes.TrimSpace(e)) > 0 && bytes.TrimSpace(e)[0] != '[' {
					out = appendEntries(out, e)
				}
			}
		}
	case '{':
		var k keyEntry
		if json.Unmarshal(raw, &k) == nil {
			out = append(out, k)
		}
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out = append(out, keyEntry{ID: s})
		}
	}
	return out
}

// find returns the entry with id, if d lists it.
func (d *keyDoc) find(id string) (keyEntry, bool) {
	for _, k := range d.keys() {
		if k.ID == id {
			return k, true
		}
	}
	return keyEntry{}, false
}

// ownedBy checks that an actor's entry for a key is the actor's: an entry
// naming no owner is the actor's by being listed in it.
func (k *keyEntry) ownedBy(actor string) bool {
	o := k.owner()
	return o == "" || o == actor
}

// sameOriginIDs reports whether a and b are http(s) URLs on one origin.
func sameOriginIDs(a, b string) bool {
	oa, err := origin.Parse(a)
	if err != nil {
		return false
	}
	ob, err := origin.Parse(b)
	return err == nil && oa == ob
}

// parseKeyDocument reads the key id out of a fetched document, as the
// KeyResolver does: raw is what was served for id's document (the actor
// for "actor#main-key", the key document for GoToSocial's
// "actor/main-key"), docID its established id. It returns the key and, for
// a stand-alone key document, the owner to fetch and check (ownerToCheck
// is "" when raw is the actor listing the key itself). A document that does
// not publish the key, or publishes it for someone else or on another
// origin, is ErrNoKey.
func parseKeyDocument(raw []byte, docID string, id sig.KeyID) (key *sig.Key, ownerToCheck string, err error) {
	d, err := parseKeyDoc(raw)
	if err != nil {
		return nil, "", err
	}
	if !sameOriginIDs(id.String(), docID) {
		return nil, "", noKey(id.String(), "document on another origin")
	}
	if k, ok := d.find(id.String()); ok && k.hasMaterial() {
		// An actor listing the key.
		if !k.ownedBy(docID) {
			return nil, "", noKey(id.String(), "key owned by another actor")
		}
		pub, err := k.public()
		if err != nil {
			return nil, "", err
		}
		return &sig.Key{Public: pub, Owner: docID}, "", nil
	}
	if d.ID == id.String() && d.hasMaterial() {
		// A stand-alone key document: its owner must list it too.
		o := d.owner()
		if o == "" {
			return nil, "", noKey(id.String(), "key document names no owner")
		}
		if !sameOriginIDs(o, docID) {
			return nil, "", noKey(id.String(), "owner on another origin")
		}
		pub, err := d.public()
		if err != nil {
			return nil, "", err
		}
		return &sig.Key{Public: pub, Owner: o}, o, nil
	}
	return nil, "", noKey(id.String(), "document does not publish the key")
}

// checkKeyOwner checks that the owner document raw (established id
// ownerID) lists the key id, which a stand-alone key document attributed to
// it, and with the same material when it carries any.
func checkKeyOwner(raw []byte, ownerID string, id sig.KeyID, key *sig.Key) error {
	d, err := parseKeyDoc(raw)
	if err != nil {
		return err
	}
	if ownerID != key.Owner {
		return noKey(id.String(), "owner document has another id")
	}
	k, ok := d.find(id.String())
	if !ok || !k.ownedBy(ownerID) {
		return noKey(id.String(), "owner does not list the key")
	}
	if k.hasMaterial() {
		pub, err := k.public()
		if err != nil {
			return err
		}
		if !samePublic(pub, key.Public) {
			return noKey(id.String(), "owner lists another key under that id")
		}
	}
	return nil
}

// samePublic compares two public keys; every type we parse has Equal.
func samePublic(a, b crypto.PublicKey) bool {
	e, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && e.Equal(b)
}
