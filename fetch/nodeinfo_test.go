package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/fedkit/fedkit/fetch"
)

const (
	mastodonNodeInfo = `{"version":"2.0","software":{"name":"mastodon","version":"4.5.0"},"protocols":["activitypub"],
"services":{"outbound":[],"inbound":[]},"usage":{"users":{"total":1234,"activeMonth":100,"activeHalfyear":600},"localPosts":98765},
"openRegistrations":true,"metadata":{"nodeName":"Mastodon test"}}`
	lemmyNodeInfo = `{"version":"2.1","software":{"name":"lemmy","version":"0.19.5","repository":"https://github.com/LemmyNet/lemmy","homepage":"https://join-lemmy.org/"},
"protocols":["activitypub"],"usage":{"users":{"total":50,"activeHalfyear":10,"activeMonth":5},"localPosts":7,"localComments":9},"openRegistrations":false,"services":{"inbound":[],"outbound":[]},"metadata":{}}`
	gtsNodeInfo = `{"version":"2.0","software":{"name":"GoToSocial","version":"0.17.0 git-abc"},"protocols":["activitypub"],
"services":{"inbound":[],"outbound":[]},"openRegistrations":false,"usage":{"users":{"total":3},"localPosts":120},"metadata":{"nodeName":"gts"}}`
	misskeyNodeInfo = `{"version":"2.1","software":{"name":"Misskey","version":"2024.10.1","homepage":"https://misskey-hub.net/","repository":"https://github.com/misskey-dev/misskey"},
"protocols":"activitypub","services":{"inbound":[],"outbound":["atom1.0","rss2.0"]},"openRegistrations":"yes","usage":{"users":{"total":"77","activeMonth":-1,"activeHalfyear":1.5},"localPosts":null},
"metadata":{"nodeName":"misskey test","maintainer":{"name":"x"}}}`
)

func nodeinfoSite(t *testing.T, name, links, doc string) *site {
	s := newSite(t, name)
	s.serve("/.well-known/nodeinfo", 200, "application/json", links)
	s.serve("/nodeinfo/2.0", 200, "application/json", doc)
	s.serve("/nodeinfo/2.1", 200, `application/json; profile="http://nodeinfo.diaspora.software/ns/schema/2.1#"`, doc)
	return s
}

func TestNodeInfo(t *testing.T) {
	t.Parallel()
	both := `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"{base}/nodeinfo/2.0"},{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.1","href":"{base}/nodeinfo/2.1"}]}`
	only20 := `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"{base}/nodeinfo/2.0"}]}`
	evil := newSite(t, "evil.test")
	evil.serve("/nodeinfo/2.1", 200, "application/json", mastodonNodeInfo)
	mastodon := nodeinfoSite(t, "mastodon.test", only20, mastodonNodeInfo)
	lemmy := nodeinfoSite(t, "lemmy.test", both, lemmyNodeInfo)
	gts := nodeinfoSite(t, "gts.test", only20, gtsNodeInfo)
	misskey := nodeinfoSite(t, "misskey.test", both, misskeyNodeInfo)
	offsite := nodeinfoSite(t, "offsite.test", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.1","href":"`+evil.base+`/nodeinfo/2.1"}]}`, "")
	nolinks := nodeinfoSite(t, "nolinks.test", `{"links":[{"rel":"other","href":"{base}/x"}]}`, "")
	redirect := nodeinfoSite(t, "redirect.test", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.1","href":"{base}/moved"}]}`, "")
	redirect.mux.Handle("/moved", http.RedirectHandler(evil.url("/nodeinfo/2.1"), http.StatusFound))

	f := newFetcher(t, nil)
	i64 := func(p *int64) int64 {
		if p == nil {
			return -1
		}
		return *p
	}
	tests := []struct {
		name      string
		origin    string
		software  string
		version   string
		users     int64 // -1: absent
		posts     int64
		open      string // "true", "false", "nil"
		protocols int
		err       error
	}{
		{"mastodon 2.0", mastodon.base, "mastodon", "2.0", 1234, 98765, "true", 1, nil},
		{"lemmy newest of 2.0 and 2.1", lemmy.base, "lemmy", "2.1", 50, 7, "false", 1, nil},
		{"gotosocial name lower-cased", gts.base, "gotosocial", "2.0", 3, 120, "false", 1, nil},
		{"misskey read leniently", misskey.base, "misskey", "2.1", 77, -1, "nil", 1, nil},
		{"schemeless origin", "lemmy.test:" + lemmy.host[len("lemmy.test:"):], "lemmy", "2.1", 50, 7, "false", 1, nil},
		{"link to another host not followed", offsite.base, "", "", 0, 0, "", 0, fetch.ErrNoNodeInfo},
		{"redirect to another host refused", redirect.base, "", "", 0, 0, "", 0, fetch.ErrNoNodeInfo},
		{"no schema link", nolinks.base, "", "", 0, 0, "", 0, fetch.ErrNoNodeInfo},
		{"no well-known", evil.base, "", "", 0, 0, "", 0, fetch.ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := evil.hits.Load()
			ni, err := f.NodeInfo(context.Background(), tc.origin)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("NodeInfo = %v, want %v", err, tc.err)
				}
				if tc.origin == offsite.base && evil.hits.Load() != before {
					t.Error("the other host was asked")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			open := "nil"
			if ni.OpenRegistrations != nil {
				open = map[bool]string{true: "true", false: "false"}[*ni.OpenRegistrations]
			}
			if ni.Software.Name != tc.software || ni.Version != tc.version || i64(ni.Usage.Users.Total) != tc.users ||
				i64(ni.Usage.LocalPosts) != tc.posts || open != tc.open || len(ni.Protocols) != tc.protocols {
				t.Errorf("got %+v users=%d posts=%d open=%s", ni, i64(ni.Usage.Users.Total), i64(ni.Usage.LocalPosts), open)
			}
		})
	}
}

func TestParseNodeInfoLenient(t *testing.T) {
	t.Parallel()
	ni, err := fetch.ParseNodeInfo([]byte(misskeyNodeInfo))
	if err != nil {
		t.Fatal(err)
	}
	if ni.Usage.Users.ActiveMonth != nil || ni.Usage.Users.ActiveHalfyear != nil {
		t.Error("negative or fractional counts kept")
	}
	if len(ni.Services.Outbound) != 2 || ni.Metadata["nodeName"] != "misskey test" || ni.Software.Homepage == "" {
		t.Errorf("parsed %+v", ni)
	}
	for _, bad := range []string{`[]`, `null`, `"x"`, `{`} {
		if _, err := fetch.ParseNodeInfo([]byte(bad)); !errors.Is(err, fetch.ErrMalformed) {
			t.Errorf("ParseNodeInfo(%s) = %v", bad, err)
		}
	}
	empty, err := fetch.ParseNodeInfo([]byte(`{}`))
	if err != nil || empty.Software.Name != "" || empty.Protocols != nil {
		t.Errorf("empty object: %+v, %v", empty, err)
	}
}

func TestParseNodeInfoLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, href, version string
		err                     error
	}{
		{"newest wins", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.1","href":"a"},{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"b"}]}`, "a", "2.1", nil},
		{"https rel and trailing slash", `{"links":[{"rel":"https://nodeinfo.diaspora.software/ns/schema/2.2/","href":"c"},{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.1","href":"a"}]}`, "c", "2.2", nil},
		{"1.10 beats 1.9", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/1.10","href":"x"},{"rel":"http://nodeinfo.diaspora.software/ns/schema/1.9","href":"y"}]}`, "x", "1.10", nil},
		{"junk links skipped", `{"links":[{"rel":7},{"rel":"http://nodeinfo.diaspora.software/ns/schema/x","href":"z"},{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0","href":"ok"}]}`, "ok", "2.0", nil},
		{"no href", `{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.0"}]}`, "", "", fetch.ErrNoNodeInfo},
		{"not JSON", `<html>`, "", "", fetch.ErrMalformed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, v, err := fetch.ParseNodeInfoLinks([]byte(tc.in))
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) || h != tc.href || v != tc.version {
				t.Fatalf("= %q, %q, %v", h, v, err)
			}
		})
	}
}

func TestUnverifiedJSON(t *testing.T) {
	t.Parallel()
	s := newSite(t, "mastodon.test")
	s.serve("/plain", 200, "application/json", `{"id":"https://elsewhere.example/x","orderedItems":[1,2]}`)
	s.serve("/array", 200, "application/json", `[1]`)
	s.serve("/busy", 503, "", "")
	s.serve("/gone", 410, "", "")
	s.serve("/bad", 400, "", "")
	s.mux.Handle("/moved", http.RedirectHandler("/plain", http.StatusFound))
	f := newFetcher(t, nil)
	m, u, err := f.UnverifiedJSON(context.Background(), s.url("/moved"))
	if err != nil || m["id"] != "https://elsewhere.example/x" || u.Path != "/plain" {
		t.Fatalf("= %v, %v, %v", m, u, err)
	}
	tests := []struct {
		path      string
		err       error
		temporary bool
	}{
		{"/array", fetch.ErrMalformed, false},
		{"/busy", fetch.ErrTemporary, true},
		{"/gone", fetch.ErrGone, false},
		{"/bad", nil, false},
		{"/missing", fetch.ErrNotFound, false},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			_, _, err := f.UnverifiedJSON(context.Background(), s.url(tc.path))
			if err == nil || (tc.err != nil && !errors.Is(err, tc.err)) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if errors.Is(err, fetch.ErrTemporary) != tc.temporary {
				t.Fatalf("temporary = %v", !tc.temporary)
			}
		})
	}
}
