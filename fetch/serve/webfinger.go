package serve

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"strings"

	"github.com/fedkit/fedkit/fetch"
)

// WebFinger paths.
const (
	WebFingerPath = "/.well-known/webfinger"
	HostMetaPath  = "/.well-known/host-meta"
)

// ErrNotFound may be returned by a FindAccount function for a resource it
// does not know (as may nil, nil); the answer is 404.
var ErrNotFound = errors.New("serve: no such account")

// Account is what a WebFinger answer says of an account.
type Account struct {
	// Subject is the canonical resource, "acct:alice@social.example".
	// Required.
	Subject string
	// Aliases are its other URIs: the actor URL, the profile page.
	Aliases []string
	// Actor is the ActivityPub actor's URL, the self link. Required.
	Actor string
	// ProfilePage is the HTML profile, the profile-page link. Optional.
	ProfilePage string
}

// FindAccount maps a WebFinger resource ("acct:alice@social.example", or
// an alias such as the actor URL) to an account: nil (or ErrNotFound) for
// none.
type FindAccount func(ctx context.Context, resource string) (*Account, error)

// WebFinger answers /.well-known/webfinger (RFC 7033) as Mastodon does: a
// JRD (application/jrd+json) with the actor as a typed self link, 400
// without a resource, 404 for an unknown one, and CORS open to every
// origin so browser clients can resolve handles.
func WebFinger(find FindAccount) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cors(w, r) {
			return
		}
		resource := r.URL.Query().Get("resource")
		if resource == "" {
			http.Error(w, "resource required", http.StatusBadRequest)
			return
		}
		acct, err := find(r.Context(), resource)
		switch {
		case errors.Is(err, ErrNotFound) || (err == nil && acct == nil):
			http.Error(w, "not found", http.StatusNotFound)
			return
		case err != nil:
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		jrd := fetch.JRD{Subject: acct.Subject, Aliases: acct.Aliases, Links: []fetch.Link{
			{Rel: "self", Type: "application/activity+json", Href: acct.Actor},
		}}
		if acct.ProfilePage != "" {
			jrd.Links = append(jrd.Links, fetch.Link{Rel: "http://webfinger.net/rel/profile-page", Type: "text/html", Href: acct.ProfilePage})
		}
		b, err := json.Marshal(&jrd)
		if err != nil {
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/jrd+json; charset=utf-8")
		_, _ = w.Write(b)
	})
}

// AcctUser returns the user of an "acct:user@host" (or "user@host")
// resource on host, compared case-insensitively: the usual first step of a
// FindAccount.
func AcctUser(resource, host string) (string, bool) {
	a, err := fetch.ParseAddress(resource)
	if err != nil {
		return "", false
	}
	h, err := fetch.ParseAddress("x@" + host)
	if err != nil || h.Host != a.Host {
		return "", false
	}
	return a.User, true
}

// HostMeta answers /.well-known/host-meta with the lrdd template of the
// WebFinger endpoint at publicURL ("https://social.example"), for servers
// that look WebFinger up through it.
func HostMeta(publicURL string) http.Handler {
	body := `<?xml version="1.0" encoding="UTF-8"?>
<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">
  <Link rel="lrdd" template="` + html.EscapeString(strings.TrimSuffix(publicURL, "/")+WebFingerPath) + `?resource={uri}"/>
</XRD>
`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cors(w, r) {
			return
		}
		w.Header().Set("Content-Type", "application/xrd+xml; charset=utf-8")
		_, _ = w.Write([]byte(body))
	})
}

// cors opens the well-known documents to every origin, as Mastodon does,
// answers a preflight, and refuses methods other than GET and HEAD. It
// reports whether the request is to be answered further.
func cors(w http.ResponseWriter, r *http.Request) bool {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		return true
	case http.MethodOptions:
		w.Header().Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
		w.Header().Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return false
	}
	w.Header().Set("Allow", "GET, HEAD, OPTIONS")
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

// Accounts is the FindAccount of a server with a fixed set of local
// actors: actors maps a user name to its actor URL, answered for
// "acct:user@host" (host compared case-insensitively) and for the actor
// URL itself.
func Accounts(host string, actors map[string]string) FindAccount {
	return func(_ context.Context, resource string) (*Account, error) {
		for user, actor := range actors {
			if name, ok := AcctUser(resource, host); (ok && name == user) || resource == actor {
				return &Account{Subject: "acct:" + user + "@" + host, Aliases: []string{actor}, Actor: actor}, nil
			}
		}
		return nil, nil
	}
}
