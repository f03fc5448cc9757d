package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/fetch"
)

// webfingerSite answers WebFinger from a map of resource -> (status, JRD).
func webfingerSite(t *testing.T, name string, answers map[string]struct {
	status int
	body   string
}) *site {
	s := newSite(t, name)
	s.mux.HandleFunc("/.well-known/webfinger", func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[s.expand(r.URL.Query().Get("resource"))]
		if !ok {
			w.WriteHeader(404)
			return
		}
		w.Header().Set("Content-Type", "application/jrd+json; charset=utf-8")
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(s.expand(a.body)))
	})
	return s
}

type ans = struct {
	status int
	body   string
}

const (
	mastodonJRD = `{"subject":"acct:Alice@{host}","aliases":["{base}/@Alice","{base}/users/Alice"],"links":[
{"rel":"http://webfinger.net/rel/profile-page","type":"text/html","href":"{base}/@Alice"},
{"rel":"self","type":"application/activity+json","href":"{base}/users/Alice"},
{"rel":"http://ostatus.org/schema/1.0/subscribe","template":"{base}/authorize_interaction?uri={uri}"}]}`
	lemmyJRD = `{"subject":"acct:rust@{host}","links":[
{"rel":"http://webfinger.net/rel/profile-page","type":"text/html","href":"{base}/u/rust"},
{"rel":"self","type":"application/activity+json","href":"{base}/u/rust","properties":{"https://www.w3.org/ns/activitystreams#type":"Person"}},
{"rel":"http://webfinger.net/rel/profile-page","type":"text/html","href":"{base}/c/rust"},
{"rel":"self","type":"application/activity+json","href":"{base}/c/rust","properties":{"https://www.w3.org/ns/activitystreams#type":"Group"}}]}`
	gtsJRD = `{"subject":"acct:carol@{host}","aliases":["{base}/users/carol"],"links":[
{"rel":"self","type":"application/ld+json; profile=\"https://www.w3.org/ns/activitystreams\"","href":"{base}/users/carol"},
{"rel":"self","type":"application/json","href":"{base}/users/carol.json"}]}`
	misskeyJRD = `{"subject":"acct:dave@{host}","links":[{"rel":"self","type":"application/activity+json","href":"{base}/users/9dave"},
{"rel":"http://webfinger.net/rel/profile-page","type":"text/html","href":"{base}/@dave"}]}`
)

func hostExpand(s *site, body string) string { return strings.ReplaceAll(body, "{host}", s.host) }

func TestWebFinger(t *testing.T) {
	t.Parallel()
	var mastodon, lemmy, gts, misskey, gone *site
	mastodon = webfingerSite(t, "mastodon.test", nil)
	// Answers need the site's own host, known only once it listens.
	setAnswers := func(s *site, m map[string]ans) {
		s.mux = http.NewServeMux()
		s.mux.HandleFunc("/.well-known/webfinger", func(w http.ResponseWriter, r *http.Request) {
			a, ok := m[r.URL.Query().Get("resource")]
			if !ok {
				w.WriteHeader(404)
				return
			}
			w.Header().Set("Content-Type", "application/jrd+json")
			w.WriteHeader(a.status)
			_, _ = w.Write([]byte(s.expand(hostExpand(s, a.body))))
		})
	}
	setAnswers(mastodon, map[string]ans{"acct:alice@" + mastodon.host: {200, mastodonJRD}})
	lemmy = newSite(t, "lemmy.test")
	setAnswers(lemmy, map[string]ans{"acct:rust@" + lemmy.host: {200, lemmyJRD}})
	gts = newSite(t, "gts.test")
	setAnswers(gts, map[string]ans{})
	gts.mux.HandleFunc("/.well-known/host-meta", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xrd+xml")
		_, _ = w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0"><Link rel="lrdd" type="application/xrd+xml" template="` + gts.base + `/lrdd/webfinger?resource={uri}"/></XRD>`))
	})
	gts.mux.HandleFunc("/lrdd/webfinger", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("resource") != "acct:carol@"+gts.host {
			w.WriteHeader(404)
			return
		}
		w.Header().Set("Content-Type", "application/jrd+json")
		_, _ = w.Write([]byte(gts.expand(hostExpand(gts, gtsJRD))))
	})
	misskey = newSite(t, "misskey.test")
	setAnswers(misskey, map[string]ans{
		"acct:dave@" + misskey.host:   {200, misskeyJRD},
		"acct:empty@" + misskey.host:  {200, ``},
		"acct:nosubj@" + misskey.host: {200, `{"links":[]}`},
		"acct:busy@" + misskey.host:   {503, ``},
		"acct:weird@" + misskey.host:  {200, `{"subject":"acct:weird@{host}","links":[{"rel":"self","type":"application/activity+json"},"junk",{"rel":"self","type":"text/html","href":"{base}/x"}]}`},
	})
	gone = newSite(t, "gone.test")
	setAnswers(gone, map[string]ans{"acct:old@" + gone.host: {410, `{}`}})
	noMeta := newSite(t, "nometa.test")

	f := newFetcher(t, nil)
	tests := []struct {
		name     string
		handle   string
		subject  string
		actors   []string // href|actorType
		err      error
		hits     *site
		wantHits int64
	}{
		{"mastodon @user@host", "@alice@" + mastodon.host, "acct:Alice@" + mastodon.host, []string{mastodon.url("/users/Alice") + "|"}, nil, nil, 0},
		{"acct: form", "acct:alice@" + mastodon.host, "acct:Alice@" + mastodon.host, []string{mastodon.url("/users/Alice") + "|"}, nil, nil, 0},
		{"lemmy user and community under one name", "rust@" + lemmy.host, "acct:rust@" + lemmy.host,
			[]string{lemmy.url("/u/rust") + "|Person", lemmy.url("/c/rust") + "|Group"}, nil, nil, 0},
		{"gotosocial through host-meta lrdd on 404", "carol@" + gts.host, "acct:carol@" + gts.host, []string{gts.url("/users/carol") + "|"}, nil, gts, 3},
		{"lrdd answer 404 is final", "nobody@" + gts.host, "", nil, fetch.ErrNotFound, gts, 3},
		{"404 without host-meta", "x@" + noMeta.host, "", nil, fetch.ErrNotFound, noMeta, 2},
		{"misskey", "dave@" + misskey.host, "acct:dave@" + misskey.host, []string{misskey.url("/users/9dave") + "|"}, nil, nil, 0},
		{"links of the wrong shape skipped", "weird@" + misskey.host, "acct:weird@" + misskey.host, nil, nil, nil, 0},
		{"empty body", "empty@" + misskey.host, "", nil, fetch.ErrMalformed, nil, 0},
		{"no subject", "nosubj@" + misskey.host, "", nil, fetch.ErrSubject, nil, 0},
		{"503 temporary", "busy@" + misskey.host, "", nil, fetch.ErrTemporary, nil, 0},
		{"410 gone", "old@" + gone.host, "", nil, fetch.ErrGone, nil, 0},
		{"not a handle", "alice", "", nil, fetch.ErrInvalidAddress, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before int64
			if tc.hits != nil {
				before = tc.hits.hits.Load()
			}
			j, err := f.WebFinger(context.Background(), tc.handle)
			if tc.hits != nil {
				if got := tc.hits.hits.Load() - before; got != tc.wantHits {
					t.Errorf("requests = %d, want %d", got, tc.wantHits)
				}
			}
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("WebFinger = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("WebFinger: %v", err)
			}
			if j.Subject != tc.subject {
				t.Errorf("subject %q, want %q", j.Subject, tc.subject)
			}
			var got []string
			for _, a := range j.Actors() {
				got = append(got, a.Href+"|"+a.ActorType)
			}
			if strings.Join(got, " ") != strings.Join(tc.actors, " ") {
				t.Errorf("actors %q, want %q", got, tc.actors)
			}
		})
	}
}

func TestParseAddress(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"@alice@social.example", "alice@social.example", true},
		{"alice@Social.Example.", "alice@social.example", true},
		{"acct:Alice@social.example", "Alice@social.example", true},
		{"ACCT:alice@social.example", "alice@social.example", true},
		{"alice@bücher.example", "alice@xn--bcher-kva.example", true},
		{"alice@social.example:8443", "alice@social.example:8443", true},
		{"alice@127.0.0.1", "alice@127.0.0.1", true},
		{"alice", "", false},
		{"@alice", "", false},
		{"alice@", "", false},
		{"@@social.example", "", false},
		{"a@b@social.example", "", false},
		{"al ice@social.example", "", false},
		{"alice@social.example/path", "", false},
		{"alice@social.example:x", "", false},
		{"alice@[::1", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			a, err := fetch.ParseAddress(tc.in)
			if tc.ok != (err == nil) {
				t.Fatalf("ParseAddress(%q) = %v, %v", tc.in, a, err)
			}
			if tc.ok && a.String() != tc.want {
				t.Errorf("= %q, want %q", a, tc.want)
			}
			if !tc.ok && !errors.Is(err, fetch.ErrInvalidAddress) {
				t.Errorf("error %v is not ErrInvalidAddress", err)
			}
		})
	}
}

func TestOnionWebFingerOverHTTP(t *testing.T) {
	t.Parallel()
	s := newSite(t, "hiddenservice.onion")
	s.mux.HandleFunc("/.well-known/webfinger", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jrd+json")
		_, _ = w.Write([]byte(`{"subject":"acct:alice@` + s.host + `","links":[{"rel":"self","type":"application/activity+json","href":"` + s.url("/users/alice") + `"}]}`))
	})
	c, err := client.New(&client.Config{
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		AllowOnion:   true,
		Resolver:     onionResolver{},
	})
	if err != nil {
		t.Fatal(err)
	}
	// No PlainHTTPWebFinger: only the onion rule makes this plain http,
	// and the test server speaks nothing else.
	f, err := fetch.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	j, err := f.WebFinger(context.Background(), "alice@"+s.host)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Actors()) != 1 {
		t.Fatalf("actors %v", j.Actors())
	}
	// An ordinary host is asked over https, which the plain server cannot answer.
	plain := newSite(t, "plain.test")
	if _, err := f.WebFinger(context.Background(), "alice@"+plain.host); err == nil {
		t.Fatal("a non-onion host was asked over http")
	}
}

type onionResolver struct{}

func (onionResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}
