package serve

import (
	"encoding/json"
	"net/http"

	"github.com/fedkit/fedkit/sig/inbox"
)

// ContentTypeActivityJSON is what an ActivityPub document is served as.
const ContentTypeActivityJSON = "application/activity+json; charset=utf-8"

// WantsActivityPub reports whether r asks for ActivityStreams JSON: its
// Accept names application/activity+json or application/ld+json (with
// any profile, as Mastodon reads it) with a non-zero q. Serve the actor
// document then, and the HTML profile otherwise. It is the rule
// inbox.NewAuthorizedFetch guards GETs by (inbox.WantsActivityPub).
func WantsActivityPub(r *http.Request) bool { return inbox.WantsActivityPub(r) }

// WriteJSON writes v as ActivityStreams JSON with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", ContentTypeActivityJSON)
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
