package inbox

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/fedkit/fedkit/sig"
)

// MaxBodyBytesDefault bounds an inbox body: 1 MiB, far above any activity
// a server sends.
const MaxBodyBytesDefault = 1 << 20

// LDVerifier checks a Linked Data Signature (RsaSignature2017) on an
// activity body and reports the key and its owner; *ldsig.Verifier
// satisfies it.
type LDVerifier interface {
	VerifyActivity(ctx context.Context, body []byte) (keyID sig.KeyID, owner string, err error)
}

// KeyRefetcher fetches a key again, ignoring any cache, after a signature
// failed with it (the sender may have rotated it); *fetch.KeyResolver
// satisfies it. A KeyResolver that also implements it is used as one.
type KeyRefetcher interface {
	RefetchKey(ctx context.Context, id sig.KeyID) (*sig.Key, error)
}

// Refetcher fetches an object from its id, as the id's origin serves it,
// and returns its JSON; *fetch.Fetcher satisfies it.
type Refetcher interface {
	Refetch(ctx context.Context, id string) ([]byte, error)
}

// Config configures a Handler. A nil *Config means defaults.
type Config struct {
	// Verifier configures the HTTP signature check (clock, window,
	// URLScheme behind a proxy, nonces); its MaxBodyBytes is replaced by
	// MaxBodyBytes. Defaults to the zero sig.VerifierConfig.
	Verifier sig.VerifierConfig
	// MaxBodyBytes bounds the body. Defaults to MaxBodyBytesDefault.
	MaxBodyBytes int64
	// LD verifies Linked Data Signatures on activities whose signer is not
	// their actor. Defaults to nil: LD signatures do not establish trust.
	LD LDVerifier
	// Objects refetches an activity from its id on the actor's origin when
	// nothing else ties it to its actor. Defaults to nil: no refetch.
	Objects Refetcher
	// DisableProofs ignores Data Integrity proofs. Defaults to false: an
	// eddsa-jcs-2022 proof by the actor's key establishes the activity.
	DisableProofs bool
	// DisableKeyRefetch never refetches a key after a failed signature.
	// Defaults to false: a KeyResolver implementing KeyRefetcher is asked
	// once per failure (and rate-limits itself).
	DisableKeyRefetch bool
	// Logger receives a debug line per refusal. Defaults to discarding.
	Logger *slog.Logger
}

// Handler is an inbox: it reads a bounded body, verifies the HTTP
// signature, ties the activity to its actor, and hands it to the
// application. It is safe for concurrent use.
type Handler struct {
	keys    sig.KeyResolver
	refetch KeyRefetcher
	v       *sig.Verifier
	receive func(context.Context, *Activity) error
	cfg     Config
	log     *slog.Logger
	tel     *telemetry
}

// New returns an inbox resolving keys through keys (usually a
// *fetch.KeyResolver) and passing accepted activities to receive. An error
// from receive is answered 500, so the sender retries; return nil for
// activities the application ignores.
func New(keys sig.KeyResolver, receive func(ctx context.Context, a *Activity) error, cfg *Config) (*Handler, error) {
	if keys == nil || receive == nil {
		return nil, errors.New("inbox: New needs a KeyResolver and a receive function")
	}
	h := &Handler{keys: keys, receive: receive}
	if cfg != nil {
		h.cfg = *cfg
	}
	if h.cfg.MaxBodyBytes == 0 {
		h.cfg.MaxBodyBytes = MaxBodyBytesDefault
	}
	if h.cfg.MaxBodyBytes < 0 {
		return nil, errors.New("inbox: negative MaxBodyBytes")
	}
	if r, ok := keys.(KeyRefetcher); ok && !h.cfg.DisableKeyRefetch {
		h.refetch = r
	}
	h.log = h.cfg.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	vc := h.cfg.Verifier
	vc.MaxBodyBytes = h.cfg.MaxBodyBytes
	var err error
	if h.v, err = newVerifier(keys, &vc); err != nil {
		return nil, err
	}
	h.instrument()
	return h, nil
}

// ServeHTTP answers 202 for an accepted activity, and the refusal's
// status (400, 401, 413) with a fixed short text otherwise, a signature
// refusal with an Accept-Signature field saying what it accepts; an activity
// nothing ties to its actor is answered 202 and dropped, as Mastodon does.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	a, err := h.Accept(r)
	if err != nil {
		var re *RefusalError
		if !errors.As(err, &re) {
			re = refuse(ReasonBadSignature, err)
		}
		h.log.DebugContext(r.Context(), "inbox: refused", "reason", re.Reason.String(), "err", err)
		if st := re.Reason.Status(); st == http.StatusAccepted {
			w.WriteHeader(st) // dropped, as Mastodon drops it
		} else {
			acceptSignature(w, h.v, r, re.Reason)
			http.Error(w, re.Reason.String(), st)
		}
		return
	}
	if err := h.receive(r.Context(), a); err != nil {
		h.log.ErrorContext(r.Context(), "inbox: receive", "id", a.ID, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// accept is Accept without its telemetry.
func (h *Handler) accept(r *http.Request) (*Activity, error) {
	ctx := r.Context()
	body, err := readBody(r, h.cfg.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	hd, a, err := parseActivity(body)
	if err != nil {
		return nil, refuse(ReasonNotActivity, nil)
	}
	res, keyIDs, err := h.verify(r, body)
	if err != nil {
		if errors.Is(err, sig.ErrGone) && selfDelete(a) && len(keyIDs) > 0 && sameOrigin(keyIDs[0].String(), a.Actor) {
			a.Trust, a.VouchedBy = TrustGone, keyIDs[0]
			return a, nil
		}
		return nil, signatureRefusal(err)
	}
	a.Signature = res
	if res.Owner == a.Actor {
		a.Trust, a.VouchedBy = TrustSignature, res.KeyID
		return a, nil
	}
	if h.cfg.LD != nil && len(hd.Signature) > 0 {
		id, owner, err := h.cfg.LD.VerifyActivity(ctx, body)
		if err == nil && owner == a.Actor {
			a.Trust, a.VouchedBy = TrustLDSignature, id
			return a, nil
		}
		h.log.DebugContext(ctx, "inbox: LD signature not the actor's", "actor", a.Actor, "err", err)
	}
	if !h.cfg.DisableProofs && len(hd.Proof) > 0 {
		id, err := h.verifyProof(ctx, body, a.Actor)
		if err == nil {
			a.Trust, a.VouchedBy = TrustProof, id
			return a, nil
		}
		h.log.DebugContext(ctx, "inbox: proof not the actor's", "actor", a.Actor, "err", err)
	}
	if h.cfg.Objects != nil && a.ID != "" && sameOrigin(a.ID, a.Actor) {
		b, err := h.cfg.Objects.Refetch(ctx, a.ID)
		if err == nil {
			if _, got, perr := parseActivity(b); perr == nil && got.ID == a.ID && got.Actor == a.Actor {
				got.Signature, got.Trust, got.VouchedBy = res, TrustRefetch, res.KeyID
				return got, nil
			}
			err = errors.New("refetched activity differs in id or actor")
		}
		h.log.DebugContext(ctx, "inbox: refetch failed", "id", a.ID, "err", err)
	}
	return nil, refuse(ReasonSignerNotActor, fmt.Errorf("signed by %q for actor %q", res.Owner, a.Actor))
}

// selfDelete reports a Delete whose object is its own actor.
func selfDelete(a *Activity) bool { return a.Type == "Delete" && a.Object == a.Actor }

func signatureRefusal(err error) *RefusalError {
	switch {
	case errors.Is(err, sig.ErrNoSignature):
		return refuse(ReasonNoSignature, err)
	case errors.Is(err, sig.ErrMalformed):
		return refuse(ReasonMalformedSignature, err)
	case errors.Is(err, sig.ErrGone):
		return refuse(ReasonKeyGone, err)
	}
	return refuse(ReasonBadSignature, err)
}

// readBody reads at most max bytes; more is ReasonBodyTooLarge.
func readBody(r *http.Request, max int64) ([]byte, error) {
	if r.ContentLength > max {
		return nil, refuse(ReasonBodyTooLarge, nil)
	}
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return nil, refuse(ReasonNotActivity, err)
	}
	if int64(len(body)) > max {
		return nil, refuse(ReasonBodyTooLarge, nil)
	}
	return body, nil
}

// verifyProof checks body's Data Integrity proof with the key its
// verificationMethod names, which must be the actor's Ed25519 key. An LD
// signature is detached first: Fedify signs the proof before it.
func (h *Handler) verifyProof(ctx context.Context, body []byte, actor string) (sig.KeyID, error) {
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		return sig.KeyID{}, err
	}
	delete(doc, "signature")
	p, err := sig.ParseProof(doc)
	if err != nil {
		return sig.KeyID{}, err
	}
	id, err := sig.ParseKeyID(p.VerificationMethod)
	if err != nil {
		return sig.KeyID{}, err
	}
	if !sameOrigin(id.String(), actor) {
		return sig.KeyID{}, errors.New("verification method on another origin than the actor")
	}
	key, err := h.keys.ResolveKey(ctx, id)
	if err != nil {
		return sig.KeyID{}, err
	}
	pub, ok := key.Public.(ed25519.PublicKey)
	if !ok || key.Owner != actor {
		return sig.KeyID{}, errors.New("verification method is not an Ed25519 key of the actor")
	}
	if _, err := sig.VerifyProof(doc, pub); err != nil {
		return sig.KeyID{}, err
	}
	return id, nil
}

// verify checks r's signature over body, refetching a key once when the
// signature fails with it, and returns the key IDs it resolved.
func (h *Handler) verify(r *http.Request, body []byte) (*sig.Result, []sig.KeyID, error) {
	res, ids, err := verifyWith(h.v, r, body)
	if err != nil && errors.Is(err, sig.ErrBadSignature) && h.refetch != nil && refetched(r.Context(), h.refetch, ids) {
		res, ids, err = verifyWith(h.v, r, body)
	}
	return res, ids, err
}

// refetched refetches ids and reports whether any came back.
func refetched(ctx context.Context, rf KeyRefetcher, ids []sig.KeyID) bool {
	again := false
	for _, id := range ids {
		if _, err := rf.RefetchKey(ctx, id); err == nil {
			again = true
		}
	}
	return again
}

// verifyWith verifies a copy of r carrying body, recording the keys the
// verifier resolves.
func verifyWith(v *sig.Verifier, r *http.Request, body []byte) (*sig.Result, []sig.KeyID, error) {
	slot := &keySlot{}
	rq := r.WithContext(context.WithValue(r.Context(), keySlotKey{}, slot))
	// The verifier reads GetBody when set: both must give what was read.
	rq.Body = io.NopCloser(bytes.NewReader(body))
	rq.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	rq.ContentLength = int64(len(body))
	res, err := v.Verify(rq)
	return res, slot.ids, err
}

type keySlot struct{ ids []sig.KeyID }

type keySlotKey struct{}

// recorder notes in the request's keySlot which keys the verifier asked
// for, so a failure can refetch exactly those.
type recorder struct{ keys sig.KeyResolver }

func (rc recorder) ResolveKey(ctx context.Context, id sig.KeyID) (*sig.Key, error) {
	if s, ok := ctx.Value(keySlotKey{}).(*keySlot); ok {
		s.ids = append(s.ids, id)
	}
	return rc.keys.ResolveKey(ctx, id)
}

func newVerifier(keys sig.KeyResolver, cfg *sig.VerifierConfig) (*sig.Verifier, error) {
	return sig.NewVerifier(recorder{keys}, cfg)
}
