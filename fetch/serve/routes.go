package serve

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// ErrRoutes is returned by Routes for actors it cannot serve together:
// none, on several hosts, an inbox on another host, two at one URL, or a
// URL without a clean path of its own.
var ErrRoutes = errors.New("serve: actors cannot be routed")

// Routes returns a mux serving local actors on their host: each actor's
// document (GET at its ID's path), its inbox and shared inbox (POST at
// their paths, answered by inbox, usually a *inbox.Handler) and WebFinger for
// "acct:username@host" and the actor's ID (actors without a Username are
// left out of WebFinger). Routes match on paths only, so the mux works
// behind a proxy. Add the application's other routes (NodeInfo,
// host-meta, web pages) to the mux returned.
func Routes(inbox http.Handler, actors ...*Actor) (*http.ServeMux, error) {
	if inbox == nil || len(actors) == 0 {
		return nil, fmt.Errorf("%w: Routes needs an inbox and an actor", ErrRoutes)
	}
	mux := http.NewServeMux()
	host, accounts, seen := "", map[string]string{}, map[string]bool{}
	for _, a := range actors {
		id, err := routePath(a.ID)
		if err != nil {
			return nil, err
		}
		if host == "" {
			host = id.Host
		}
		if !strings.EqualFold(id.Host, host) {
			return nil, fmt.Errorf("%w: %s is not on %s", ErrRoutes, a.ID, host)
		}
		if seen["GET "+id.pattern] {
			return nil, fmt.Errorf("%w: two actors at %s", ErrRoutes, a.ID)
		}
		seen["GET "+id.pattern] = true
		mux.Handle("GET "+id.pattern, a)
		inboxes := []string{a.Inbox}
		if a.Endpoints != nil && a.Endpoints.SharedInbox != "" {
			inboxes = append(inboxes, a.Endpoints.SharedInbox)
		}
		for _, raw := range inboxes {
			in, err := routePath(raw)
			if err != nil {
				return nil, err
			}
			if !strings.EqualFold(in.Host, host) {
				return nil, fmt.Errorf("%w: inbox %s is not on %s", ErrRoutes, raw, host)
			}
			if !seen["POST "+in.pattern] { // actors may share an inbox
				seen["POST "+in.pattern] = true
				mux.Handle("POST "+in.pattern, inbox)
			}
		}
		if a.PreferredUsername != "" {
			accounts[a.PreferredUsername] = a.ID
		}
	}
	mux.Handle(WebFingerPath, WebFinger(Accounts(host, accounts)))
	return mux, nil
}

type route struct{ Host, pattern string }

// routePath reads the host and the ServeMux pattern of an absolute URL's
// path, matched exactly.
func routePath(raw string) (route, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.RawQuery != "" {
		return route{}, fmt.Errorf("%w: %q is not an absolute URL without a query", ErrRoutes, raw)
	}
	p := u.EscapedPath()
	// ServeMux cleans request paths, so an unclean one could never match.
	clean := path.Clean(u.Path)
	if strings.HasSuffix(u.Path, "/") && clean != "/" {
		clean += "/"
	}
	if p == "" || p == "/" || clean != u.Path || strings.ContainsAny(u.Path, "{}") || strings.HasPrefix(p, "/.well-known/") {
		return route{}, fmt.Errorf("%w: %q has no path of its own", ErrRoutes, raw)
	}
	if strings.HasSuffix(p, "/") {
		p += "{$}" // the path itself, not its subtree
	}
	return route{Host: u.Host, pattern: p}, nil
}
