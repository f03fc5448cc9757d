package serve

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// ContentTypeActivityJSON is what an ActivityPub document is served as.
const ContentTypeActivityJSON = "application/activity+json; charset=utf-8"

// WantsActivityPub reports whether r asks for ActivityStreams JSON: its
// Accept names application/activity+json or application/ld+json (with
// any profile, as Mastodon reads it) with a non-zero q. Serve the actor
// document then, and the HTML profile otherwise.
func WantsActivityPub(r *http.Request) bool {
	for _, line := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(line, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			if q, err := strconv.ParseFloat(params["q"], 64); err == nil && q == 0 {
				continue // "not acceptable"
			}
			if mt == "application/activity+json" || mt == "application/ld+json" {
				return true
			}
		}
	}
	return false
}

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
