package relay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
	"github.com/fedkit/fedkit/examples/relay/internal/store"
	"github.com/fedkit/fedkit/sig/inbox"
)

// activity is the part of an incoming activity the relay reads.
type activity struct {
	ID     string          `json:"id"`
	Type   json.RawMessage `json:"type"`
	Actor  json.RawMessage `json:"actor"`
	Object json.RawMessage `json:"object"`
	To     json.RawMessage `json:"to"`
	CC     json.RawMessage `json:"cc"`
}

func (a *activity) typ() string      { return firstString(a.Type) }
func (a *activity) actorID() string  { return idOf(a.Actor) }
func (a *activity) objectID() string { return idOf(a.Object) }

// firstString reads a string, or the first string of an array.
func firstString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var ss []string
	if json.Unmarshal(raw, &ss) == nil && len(ss) > 0 {
		return ss[0]
	}
	return ""
}

// idOf reads a reference: a string, or an object's id.
func idOf(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &o) == nil {
		return o.ID
	}
	return ""
}

func stringList(raw json.RawMessage) []string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []string{s}
	}
	var ss []string
	_ = json.Unmarshal(raw, &ss)
	return ss
}

// isPublicID reports the Public collection in any of its spellings (the
// compacted "as:Public" and bare "Public" are both seen in the wild).
func isPublicID(id string) bool { return id == Public || id == "as:Public" || id == "Public" }

func isPublic(a *activity) bool {
	return slices.ContainsFunc(append(stringList(a.To), stringList(a.CC)...), isPublicID)
}

// followsRelay reports a Follow object that subscribes: Public (Mastodon,
// Misskey) or the relay actor (LitePub).
func (r *Relay) followsRelay(object string) bool { return isPublicID(object) || object == r.actor }

func (r *Relay) serveInbox(w http.ResponseWriter, req *http.Request) {
	ctx := req.Context()
	in := r.inbox
	if strings.Contains(req.Header.Get("Signature-Input"), "nonce=") {
		in = r.nonced
	}
	a, err := in.Accept(req)
	if err == nil && a.Trust != inbox.TrustSignature {
		// A Delete of an actor whose key is gone (TrustGone) is taken by
		// an inbox unsigned; the relay relays nothing it cannot verify.
		err = fmt.Errorf("relay: activity not signed by its actor's key (trust %v)", a.Trust)
	}
	if err != nil {
		status, msg := inboxRefusal(err)
		if status == http.StatusUnauthorized {
			r.log.DebugContext(ctx, "inbox: signature refused", "err", err)
		}
		http.Error(w, msg, status)
		return
	}
	body := a.Body
	var act activity
	if err := json.Unmarshal(body, &act); err != nil {
		http.Error(w, "not a JSON activity", http.StatusBadRequest)
		return
	}
	su, err := url.Parse(a.Actor)
	if err != nil || !r.hostAllowed(su.Hostname()) {
		http.Error(w, "domain not allowed", http.StatusForbidden)
		return
	}
	host := hostKey(su)
	r.seenAlive(ctx, host) // a signed activity from it: the server is up
	if r.limit != nil {
		// Counted per server once the signature holds, so no one spends
		// another server's allowance.
		if ok, wait := r.limit.allow(host); !ok {
			r.log.InfoContext(ctx, "inbox: rate limited", "host", host)
			w.Header().Set("Retry-After", strconv.Itoa(retryAfter(wait)))
			http.Error(w, "too many activities from this server", http.StatusTooManyRequests)
			return
		}
	}
	status, msg := r.handle(ctx, &act, body, host)
	if status >= 400 {
		http.Error(w, msg, status)
		return
	}
	w.WriteHeader(status)
}

// inboxRefusal is the status and text the relay answers for an activity
// its inbox refused: 403 for a key on a refused domain (never fetched),
// 413, 400 for a body that is no activity, and 401 for every signature
// failure, an activity signed by another than its actor included (an
// inbox.Handler answers that 202 and drops it, as Mastodon does; the
// relay says so, since the sender expects its post relayed).
func inboxRefusal(err error) (int, string) {
	if errors.Is(err, errBlocked) {
		return http.StatusForbidden, "domain not allowed"
	}
	var re *inbox.RefusalError
	if errors.As(err, &re) {
		switch re.Reason {
		case inbox.ReasonBodyTooLarge:
			return http.StatusRequestEntityTooLarge, "body too large"
		case inbox.ReasonNotActivity:
			return http.StatusBadRequest, "not a JSON activity"
		case inbox.ReasonSignerNotActor:
			return http.StatusUnauthorized, "signer is not the activity's actor"
		}
	}
	return http.StatusUnauthorized, "signature refused"
}

func (r *Relay) handle(ctx context.Context, act *activity, body []byte, host string) (int, string) {
	switch act.typ() {
	case "Follow":
		return r.follow(ctx, act, host)
	case "Undo":
		return r.undo(ctx, act, body)
	case "Accept", "Reject":
		return http.StatusAccepted, ""
	case "Create", "Announce", "Update", "Delete", "Move":
		return r.relay(ctx, act, body, host)
	default:
		return http.StatusAccepted, ""
	}
}

func (r *Relay) follow(ctx context.Context, act *activity, host string) (int, string) {
	var style store.Style
	switch obj := act.objectID(); {
	case obj == r.actor:
		style = store.StyleLitePub
	case r.followsRelay(obj):
		style = store.StyleMastodon
	default:
		return http.StatusUnprocessableEntity, "follow the Public collection or the relay actor"
	}
	sender := act.actorID()
	if style == store.StyleMastodon {
		// A Follow of Public subscribes the whole server, so a server has
		// one: otherwise each of its actors could subscribe, and each
		// subscription would be sent every post.
		holder, err := r.serverSubscription(ctx, host, sender)
		if err != nil {
			return http.StatusServiceUnavailable, "store unavailable"
		}
		if holder != "" {
			r.log.InfoContext(ctx, "follow: server already subscribed", "actor", sender, "through", holder)
			return http.StatusConflict, "this server is already subscribed through another actor"
		}
	}
	inbox, err := r.inboxOf(ctx, sender, host)
	if errors.Is(err, ErrInboxOffHost) {
		r.log.InfoContext(ctx, "follow: refused", "actor", sender, "err", err)
		return http.StatusUnprocessableEntity, "the actor has no inbox on its own server"
	}
	if err != nil {
		r.log.InfoContext(ctx, "follow: actor lookup failed", "actor", sender, "err", err)
		return http.StatusBadGateway, "could not fetch the follower's actor"
	}
	sub := store.Subscriber{Actor: sender, Inbox: inbox, Host: host, Style: style, FollowID: act.ID,
		State: store.StateActive, Since: r.cfg.Now().UTC()}
	renewed := false
	if old, ok, err := r.cfg.Store.Get(ctx, sender); err != nil {
		return http.StatusServiceUnavailable, "store unavailable"
	} else if ok && old.State == store.StateActive {
		sub.Since = old.Since
		renewed = old.Style == sub.Style
	} else if r.cfg.ManualApproval {
		sub.State = store.StatePending
	}
	if err := r.cfg.Store.Put(ctx, sub); err != nil {
		r.log.ErrorContext(ctx, "follow: store", "err", err)
		return http.StatusServiceUnavailable, "store unavailable"
	}
	r.log.InfoContext(ctx, "subscription", "actor", sender, "style", sub.Style, "state", sub.State)
	if sub.State == store.StateActive {
		send := r.sendAccept
		if renewed {
			// Followed again while subscribed: accepted, not followed back
			// again. Another relay that follows back what follows it (as
			// this one does) would otherwise answer each follow-back with
			// its own, forever.
			send = func(ctx context.Context, sub store.Subscriber) error { return r.sendResponse(ctx, sub, "Accept") }
		}
		if err := send(ctx, sub); err != nil {
			r.log.ErrorContext(ctx, "follow: queue accept", "err", err)
			return http.StatusServiceUnavailable, "queue unavailable"
		}
	}
	return http.StatusAccepted, ""
}

// sendAccept accepts sub's Follow. A LitePub relay actor publishes its
// server's public posts to its own followers, so the relay follows it back.
func (r *Relay) sendAccept(ctx context.Context, sub store.Subscriber) error {
	if err := r.sendResponse(ctx, sub, "Accept"); err != nil {
		return err
	}
	if sub.Style != store.StyleLitePub {
		return nil
	}
	return r.sendToSubscriber(ctx, sub, r.followBack(sub))
}

// followBack is the relay's Follow of a LitePub subscriber. Its id is
// derived from the subscriber, so the Undo sent when the subscription ends
// names it without the relay storing it.
func (r *Relay) followBack(sub store.Subscriber) map[string]any {
	h := sha256.Sum256([]byte(sub.Actor))
	return map[string]any{"id": r.cfg.PublicURL + "/activities/follow-" + hex.EncodeToString(h[:16]),
		"type": "Follow", "actor": r.actor, "object": sub.Actor}
}

// endFollowBack undoes the relay's follow-back of a LitePub subscriber that
// left, so its relay actor stops announcing to the relay.
func (r *Relay) endFollowBack(ctx context.Context, sub store.Subscriber) error {
	if sub.Style != store.StyleLitePub || sub.State != store.StateActive {
		return nil // a pending subscriber was never followed back
	}
	return r.sendToSubscriber(ctx, sub, map[string]any{"id": r.newID(), "type": "Undo", "actor": r.actor, "object": r.followBack(sub)})
}

// sendToSubscriber queues activity, from the relay, for sub alone.
func (r *Relay) sendToSubscriber(ctx context.Context, sub store.Subscriber, activity map[string]any) error {
	activity["@context"] = "https://www.w3.org/ns/activitystreams"
	activity["to"] = []string{sub.Actor}
	b, err := json.Marshal(activity)
	if err != nil {
		return err
	}
	return r.cfg.Sender.SendBatch(ctx, r.keyID, b, []string{sub.Inbox}, deliver.Batch{Tag: TagAccept, Lane: driver.LanePriority})
}

// serverSubscription returns the actor, other than sender, through which
// host holds a Mastodon-style (server-wide) subscription, active or
// pending, or "" if none does.
func (r *Relay) serverSubscription(ctx context.Context, host, sender string) (string, error) {
	subs, err := r.cfg.Store.List(ctx)
	if err != nil {
		return "", err
	}
	for _, s := range subs {
		if s.Actor != sender && s.Style == store.StyleMastodon && subHost(s) == host {
			return s.Actor, nil
		}
	}
	return "", nil
}

// inboxOf fetches actor and returns its shared inbox, else its inbox: the
// first that is an http(s) URL on host, the actor's own server. Anything
// else is ErrInboxOffHost: the inbox is where the relay sends the Accept and
// every post, and an actor must not point those at another server.
func (r *Relay) inboxOf(ctx context.Context, actor, host string) (string, error) {
	doc, err := r.cfg.Lookup.Lookup(ctx, actor)
	if err != nil {
		return "", err
	}
	var a struct {
		Inbox     string `json:"inbox"`
		Endpoints struct {
			SharedInbox string `json:"sharedInbox"`
		} `json:"endpoints"`
	}
	if err := json.Unmarshal(doc.Raw, &a); err != nil {
		return "", err
	}
	for _, inbox := range []string{a.Endpoints.SharedInbox, a.Inbox} {
		if usableInbox(inbox, host) {
			return inbox, nil
		}
	}
	return "", ErrInboxOffHost
}

func (r *Relay) followObject(sub store.Subscriber) any {
	obj := Public
	if sub.Style == store.StyleLitePub {
		obj = r.actor
	}
	return map[string]any{"id": sub.FollowID, "type": "Follow", "actor": sub.Actor, "object": obj}
}

func (r *Relay) sendResponse(ctx context.Context, sub store.Subscriber, typ string) error {
	return r.sendToSubscriber(ctx, sub, map[string]any{"id": r.newID(), "type": typ, "actor": r.actor, "object": r.followObject(sub)})
}

func (r *Relay) undo(ctx context.Context, act *activity, _ []byte) (int, string) {
	var inner activity
	_ = json.Unmarshal(act.Object, &inner)
	sender := act.actorID()
	sub, ok, err := r.cfg.Store.Get(ctx, sender)
	if err != nil {
		return http.StatusServiceUnavailable, "store unavailable"
	}
	if !ok {
		return http.StatusAccepted, ""
	}
	// Mastodon, Misskey and LitePub embed the Follow they undo; some send
	// only its id. Either must be the subscription's: its Follow id, or a
	// Follow by the sender of Public or of the relay actor.
	isFollow := inner.typ() == "Follow" && (inner.actorID() == "" || inner.actorID() == sender) &&
		(inner.ID == sub.FollowID || r.followsRelay(inner.objectID()))
	if !isFollow && act.objectID() != sub.FollowID {
		// An Undo of something else (a Like, an Announce) is not ours to act on.
		return http.StatusAccepted, ""
	}
	if _, err := r.cfg.Store.Delete(ctx, sender); err != nil {
		return http.StatusServiceUnavailable, "store unavailable"
	}
	if err := r.endFollowBack(ctx, sub); err != nil {
		r.log.WarnContext(ctx, "undo: queue the follow-back's Undo", "actor", sender, "err", err)
	}
	r.log.InfoContext(ctx, "unsubscribed", "actor", sender)
	return http.StatusAccepted, ""
}

// subscriberFor finds the active subscription a sender posts under. A server
// subscribes with one actor (Mastodon's and Misskey's instance actor, a
// LitePub relay actor) but Mastodon and Misskey send each public post signed
// by its author, so any actor of a subscribed host may post.
func subscriberFor(subs []store.Subscriber, sender, host string) (store.Subscriber, bool) {
	var byHost *store.Subscriber
	for i, s := range subs {
		if s.State != store.StateActive {
			continue
		}
		if s.Actor == sender {
			return s, true
		}
		if byHost == nil && subHost(s) == host {
			byHost = &subs[i]
		}
	}
	if byHost == nil {
		return store.Subscriber{}, false
	}
	return *byHost, true
}

func (r *Relay) relay(ctx context.Context, act *activity, body []byte, host string) (int, string) {
	sender := act.actorID()
	subs, err := r.cfg.Store.List(ctx)
	if err != nil {
		return http.StatusServiceUnavailable, "store unavailable"
	}
	sub, ok := subscriberFor(subs, sender, host)
	if !ok {
		return http.StatusForbidden, "not subscribed to this relay"
	}
	typ := act.typ()
	// A LitePub relay actor announces only public posts, and addresses its
	// Announce to its own followers rather than to Public: its Announces
	// are relayed as they are. Recipients fetch the object from its origin,
	// which applies the object's own visibility.
	litePubAnnounce := typ == "Announce" && sub.Style == store.StyleLitePub && sub.Actor == sender
	if (typ == "Create" || typ == "Announce" || typ == "Update") && !isPublic(act) && !litePubAnnounce {
		return http.StatusAccepted, ""
	}
	objectID := act.objectID()
	if objectID == "" {
		return http.StatusBadRequest, "activity without object"
	}
	actKey, status, msg := r.firstRelay(ctx, act, body, typ, objectID)
	if actKey == "" {
		return status, msg
	}
	// One delivery per server, never back to the one it came from; an inbox
	// two subscriptions share is sent one of the two forms only.
	var forward, announce []string
	taken := map[string]bool{}
	for _, s := range r.recipients(subs, host, hostOf(objectID)) {
		if taken[s.Inbox] {
			continue
		}
		taken[s.Inbox] = true
		if s.Style == store.StyleLitePub && (typ == "Create" || typ == "Announce") {
			announce = append(announce, s.Inbox)
		} else {
			forward = append(forward, s.Inbox)
		}
	}
	// One ordering key per object: a Delete (or Update) of an object never
	// overtakes its Create on any inbox, whichever way each is wrapped.
	batch := deliver.Batch{Tag: TagRelay, OrderingKey: objectID}
	unavailable := func(err error) (int, string) {
		r.log.ErrorContext(ctx, "relay: queue", "err", err)
		// Not relayed, so not seen: the sender's retry is relayed.
		if err := r.cfg.Seen.Forget(ctx, actKey); err != nil {
			r.log.WarnContext(ctx, "relay: seen-set", "err", err)
		}
		return http.StatusServiceUnavailable, "queue unavailable"
	}
	if len(forward) > 0 {
		if err := r.cfg.Sender.SendBatch(ctx, r.keyID, body, dedupe(forward), batch); err != nil && !errors.Is(err, deliver.ErrNoInboxes) {
			return unavailable(err)
		}
	}
	if len(announce) > 0 {
		b, err := json.Marshal(map[string]any{
			"@context":  "https://www.w3.org/ns/activitystreams",
			"id":        r.announceID(act, body),
			"type":      "Announce",
			"actor":     r.actor,
			"object":    objectID,
			"to":        []string{r.cfg.PublicURL + "/followers"},
			"cc":        []string{Public},
			"published": r.cfg.Now().UTC().Format("2006-01-02T15:04:05Z"),
		})
		if err != nil {
			return http.StatusInternalServerError, "internal error"
		}
		if err := r.cfg.Sender.SendBatch(ctx, r.keyID, b, dedupe(announce), batch); err != nil && !errors.Is(err, deliver.ErrNoInboxes) {
			return unavailable(err)
		}
	}
	if typ == "Create" || typ == "Announce" {
		if _, err := r.cfg.Seen.Mark(ctx, seenKey("object", objectID), r.cfg.SeenWindow); err != nil {
			r.log.WarnContext(ctx, "relay: seen-set", "err", err)
		}
	}
	return http.StatusAccepted, ""
}

// announceID names the relay's Announce of act after act, so the same
// activity received twice (a sender's retry, a replay, two API processes)
// is announced under one id, which receivers deduplicate.
func (r *Relay) announceID(act *activity, body []byte) string {
	src := act.ID
	if src == "" {
		src = string(body)
	}
	h := sha256.Sum256([]byte(src))
	return r.cfg.PublicURL + "/activities/announce-" + hex.EncodeToString(h[:16])
}

func dedupe(in []string) []string {
	slices.Sort(in)
	return slices.Compact(in)
}

// SkipUnsubscribed is a deliver SkipIf hook: a relayed delivery whose inbox
// no longer belongs to an active subscriber is dropped when it comes due.
// The set of active inboxes is reread at most every refresh, so the check
// costs a map lookup per delivery rather than a store read.
func SkipUnsubscribed(st store.Store, refresh time.Duration) func(ctx context.Context, inbox string, e *driver.Envelope) bool {
	var (
		mu      sync.Mutex
		inboxes map[string]bool
		read    time.Time
	)
	return func(ctx context.Context, inbox string, e *driver.Envelope) bool {
		if e.Tag != TagRelay {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		if inboxes == nil || time.Since(read) >= refresh {
			subs, err := st.List(ctx)
			if err != nil {
				return false // deliver rather than lose a post on a store hiccup
			}
			inboxes = make(map[string]bool, len(subs))
			for _, s := range subs {
				if s.State == store.StateActive {
					inboxes[s.Inbox] = true
				}
			}
			read = time.Now()
		}
		return !inboxes[inbox]
	}
}
