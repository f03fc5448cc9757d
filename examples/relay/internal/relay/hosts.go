package relay

import (
	"errors"
	"net"
	"net/url"
	"strings"

	"github.com/fedkit/fedkit/examples/relay/internal/store"
)

// ErrInboxOffHost is returned (and a Follow answered 422) when an actor's
// inbox and shared inbox are both missing, unusable, or on a server other
// than the actor's: a subscriber must not aim the relay's deliveries at
// someone else's inbox.
var ErrInboxOffHost = errors.New("relay: actor has no usable inbox on its own host")

// hostKey is u's server as the relay compares servers: the host name in
// lower case without a trailing dot, and the port unless it is the
// scheme's default. Subdomains and other ports are other servers.
func hostKey(u *url.URL) string {
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	port := u.Port()
	if port == "" || (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		return h
	}
	return net.JoinHostPort(h, port)
}

// hostOf is rawURL's hostKey, "" if it does not parse or has no host.
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return ""
	}
	return hostKey(u)
}

// usableInbox reports an http(s) URL without credentials on host.
func usableInbox(inbox, host string) bool {
	u, err := url.Parse(inbox)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return false
	}
	return hostKey(u) == host
}

// subHost is the server a subscription belongs to: its stored host, or its
// actor's for subscriptions stored without one.
func subHost(s store.Subscriber) string {
	if s.Host != "" {
		if h := hostOf("https://" + s.Host); h != "" {
			return h
		}
	}
	return hostOf(s.Actor)
}

// recipients picks, for a fan-out, one active subscription per server:
// a Mastodon-style one if the server has any (forwarded as it came, so an
// author's Linked Data signature survives), else the oldest. Servers in
// exclude (the one the activity came from), servers the domain lists
// refuse, and subscriptions whose inbox is not on their own server (kept
// from before that was checked) are left out.
func (r *Relay) recipients(subs []store.Subscriber, exclude ...string) []store.Subscriber {
	best := map[string]store.Subscriber{}
	var order []string
	for _, s := range subs {
		h := subHost(s)
		if s.State != store.StateActive || h == "" || !usableInbox(s.Inbox, h) || !r.hostAllowed(h) {
			continue
		}
		skip := false
		for _, x := range exclude {
			skip = skip || h == x
		}
		if skip {
			continue
		}
		cur, ok := best[h]
		if !ok {
			order = append(order, h)
			best[h] = s
			continue
		}
		if better(s, cur) {
			best[h] = s
		}
	}
	out := make([]store.Subscriber, 0, len(order))
	for _, h := range order {
		out = append(out, best[h])
	}
	return out
}

// better reports whether a should serve its server rather than b.
func better(a, b store.Subscriber) bool {
	if (a.Style == store.StyleMastodon) != (b.Style == store.StyleMastodon) {
		return a.Style == store.StyleMastodon
	}
	if !a.Since.Equal(b.Since) {
		return a.Since.Before(b.Since)
	}
	return a.Actor < b.Actor
}
