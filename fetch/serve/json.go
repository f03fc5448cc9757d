package serve

import (
	"encoding/json"
	"net/http"
)

// ContentTypeActivityJSON is what an ActivityPub document is served as.
const ContentTypeActivityJSON = "application/activity+json; charset=utf-8"

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
