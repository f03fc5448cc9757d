package relay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// seenKey is the seen-set's key for an id of kind ("activity", "object"):
// hashed, so a hostile id's length costs nothing, and a backend key stays
// short.
func seenKey(kind, id string) string {
	h := sha256.Sum256([]byte(id))
	return kind + ":" + hex.EncodeToString(h[:16])
}

// firstRelay applies the loop guards to an activity about to be relayed.
// It returns the activity's seen-set key, now marked, if the activity is to
// be relayed, or "" and the answer to give. Not relayed, and answered 202
// (the sender did nothing wrong, and a retry would change nothing):
//   - an Announce of one of the relay's own activities;
//   - an Announce of an object the relay relayed within the window (a
//     LitePub relay wrapping what this relay sent it, under a new id);
//   - an activity id relayed within the window (a reflection by another
//     relay, a replay). An activity without an id is keyed by its body.
func (r *Relay) firstRelay(ctx context.Context, act *activity, body []byte, typ, objectID string) (string, int, string) {
	if typ == "Announce" {
		if strings.HasPrefix(objectID, r.cfg.PublicURL+"/") {
			r.log.DebugContext(ctx, "relay: loop: an Announce of the relay's own activity", "id", act.ID, "object", objectID)
			return "", http.StatusAccepted, ""
		}
		seen, err := r.cfg.Seen.Has(ctx, seenKey("object", objectID))
		if err != nil {
			r.log.ErrorContext(ctx, "relay: seen-set", "err", err)
			return "", http.StatusServiceUnavailable, "seen-set unavailable"
		}
		if seen {
			r.log.DebugContext(ctx, "relay: loop: an Announce of an object already relayed", "id", act.ID, "object", objectID)
			return "", http.StatusAccepted, ""
		}
	}
	id := act.ID
	if id == "" {
		id = "body:" + string(body)
	}
	key := seenKey("activity", id)
	first, err := r.cfg.Seen.Mark(ctx, key, r.cfg.SeenWindow)
	if err != nil {
		r.log.ErrorContext(ctx, "relay: seen-set", "err", err)
		return "", http.StatusServiceUnavailable, "seen-set unavailable"
	}
	if !first {
		r.log.DebugContext(ctx, "relay: already relayed", "id", act.ID)
		return "", http.StatusAccepted, ""
	}
	return key, 0, ""
}
