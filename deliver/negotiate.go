package deliver

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/sig"
)

// knock is what one request of an attempt is signed as.
type knock struct {
	signer *sig.Signer
	scheme sig.Scheme
	// asked, when set, is the signature the host asked for with
	// Accept-Signature; scheme is then RFC 9421.
	asked *sig.AcceptSignature
}

// sign signs r as k says. A request that cannot be signed as the host
// asked (a component it lacks) is signed under k's scheme instead: a
// signature the host may refuse beats no delivery.
func (k knock) sign(r *http.Request) error {
	if k.asked != nil {
		if err := k.signer.SignAccepted(r, k.asked); err == nil {
			return nil
		}
	}
	return k.signer.Sign(r, k.scheme)
}

// firstKnock signs with first, and as the host asked before when it
// negotiated RFC 9421 (and asked for no other key).
func (d *Deliverer) firstKnock(host string, signer *sig.Signer, first sig.Scheme, known bool) knock {
	k := knock{signer: signer, scheme: first}
	if known && first == sig.SchemeRFC9421 && !d.cfg.DisableNegotiation {
		if a := d.negotiated.get(host); a != nil && signer.CanSignAccepted(a) {
			k.asked = a
		}
	}
	return k
}

// secondKnock decides the one second knock an attempt may make after the
// first was refused with status (400, 401 or 403), and whether to make it:
//
//   - When the refusal carries an Accept-Signature this Deliverer can meet
//     (an algorithm the key does; a key id that is the sender's, or another
//     key of the same actor document that SenderKeys has), sign as it
//     asks: the host said what it wants.
//   - Else, with no scheme remembered for the host, the other scheme.
//   - Else, with RFC 9421 remembered and a 401 or 403, draft-cavage: the
//     host stopped reading RFC 9421 (a downgrade, a verifier turned off),
//     and waiting would fail every delivery until the memory expires.
//   - Else none: a remembered scheme's refusal is about the activity.
func (d *Deliverer) secondKnock(ctx context.Context, j *driver.Job, host string, signer *sig.Signer, first sig.Scheme, known bool, status int, accept string) (knock, bool) {
	if accept != "" && !d.cfg.DisableNegotiation {
		if k, ok := d.askedKnock(ctx, j.Envelope.KeyID, signer, host, accept); ok {
			return k, true
		}
	}
	switch {
	case !known:
		return knock{signer: signer, scheme: otherScheme(first)}, true
	case first == sig.SchemeRFC9421 && status != http.StatusBadRequest:
		return knock{signer: signer, scheme: sig.SchemeCavage}, true
	}
	return knock{}, false
}

func otherScheme(s sig.Scheme) sig.Scheme {
	if s == sig.SchemeRFC9421 {
		return sig.SchemeCavage
	}
	return sig.SchemeRFC9421
}

// askedKnock returns a knock signed as the first member of accept that
// can be met.
func (d *Deliverer) askedKnock(ctx context.Context, keyID string, signer *sig.Signer, host, accept string) (knock, bool) {
	as, err := sig.ParseAcceptSignature(http.Header{sig.AcceptSignatureHeader: {accept}})
	if err != nil {
		d.log.Debug("deliver: Accept-Signature not understood", "host", host, "err", err)
		return knock{}, false
	}
	for i := range as {
		a := &as[i]
		s := signer
		if a.KeyID != "" && a.KeyID != keyID {
			if !sameActorDocument(a.KeyID, keyID) {
				// A remote must not pick whose key signs: only another key
				// of the same actor document may stand in for the sender's.
				continue
			}
			key, err := d.keys.Key(ctx, a.KeyID)
			if err != nil {
				continue
			}
			if s, err = d.signerFor(a.KeyID, key); err != nil {
				continue
			}
		}
		if s.CanSignAccepted(a) {
			return knock{signer: s, scheme: sig.SchemeRFC9421, asked: a}, true
		}
	}
	return knock{}, false
}

// sameActorDocument reports whether two key ids are fragments of one
// document (https://a.example/users/alice#main-key and
// ...#ed25519-key, as Mastodon and Misskey publish several keys): the only
// other key an Accept-Signature may ask for. Key ids without a fragment
// (GoToSocial's .../main-key) name no shared document and never match.
func sameActorDocument(a, b string) bool {
	da, _, okA := strings.Cut(a, "#")
	db, _, okB := strings.Cut(b, "#")
	return okA && okB && da == db
}

// negotiatedMax bounds the hosts whose asked signature is kept; past it
// the memory starts afresh, and a host forgotten negotiates again.
const negotiatedMax = 4096

// negotiatedShapes keeps, per host, the Accept-Signature member it asked
// for and then accepted, so that later deliveries sign as it asked first
// instead of knocking twice. It lives in memory only: a restart costs each
// such host one more negotiation. The zero value is ready.
type negotiatedShapes struct {
	mu    sync.Mutex
	hosts map[string]*sig.AcceptSignature
}

func (n *negotiatedShapes) get(host string) *sig.AcceptSignature {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.hosts[host]
}

// remember keeps a for host, or forgets host when a is nil (it accepted a
// plain signature).
func (n *negotiatedShapes) remember(host string, a *sig.AcceptSignature) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a == nil {
		delete(n.hosts, host)
		return
	}
	if n.hosts == nil || len(n.hosts) >= negotiatedMax {
		n.hosts = make(map[string]*sig.AcceptSignature)
	}
	n.hosts[host] = a
}
