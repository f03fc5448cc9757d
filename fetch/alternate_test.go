package fetch_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/fetch"
)

var pageBase, _ = url.Parse("https://social.example/@alice/1")

func TestLinkHeaderAlternate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		values []string
		want   string
	}{
		{"mastodon", []string{`<https://social.example/users/alice/statuses/1>; rel="alternate"; type="application/activity+json"`}, "https://social.example/users/alice/statuses/1"},
		{"ld+json with profile", []string{`<https://social.example/n/1>; rel="alternate"; type="application/ld+json; profile=\"https://www.w3.org/ns/activitystreams\""`}, "https://social.example/n/1"},
		{"relative target", []string{`</users/alice/statuses/1>; rel=alternate; type="application/activity+json"`}, "https://social.example/users/alice/statuses/1"},
		{"several values, one header", []string{`<https://social.example/feed>; rel="alternate"; type="application/rss+xml", <https://social.example/n/2>; rel="alternate"; type="application/activity+json"`}, "https://social.example/n/2"},
		{"several headers", []string{`<https://x.example/a>; rel="self"`, `<https://social.example/n/3>; REL="Alternate canonical"; type="application/activity+json"`}, "https://social.example/n/3"},
		{"wrong type", []string{`<https://social.example/n/1>; rel="alternate"; type="application/json"`}, ""},
		{"ld+json without profile", []string{`<https://social.example/n/1>; rel="alternate"; type="application/ld+json"`}, ""},
		{"not alternate", []string{`<https://social.example/n/1>; rel="canonical"; type="application/activity+json"`}, ""},
		{"non-http target", []string{`<javascript:alert(1)>; rel="alternate"; type="application/activity+json"`}, ""},
		{"first rel counts", []string{`<https://social.example/n/1>; rel="canonical"; rel="alternate"; type="application/activity+json"`}, ""},
		{"garbage", []string{`garbage, <unterminated`}, ""},
		{"oversized header ignored", []string{strings.Repeat(" ", 70<<10) + `<https://social.example/n/1>; rel="alternate"; type="application/activity+json"`}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fetch.LinkHeaderAlternate(tc.values, pageBase); got != tc.want {
				t.Errorf("= %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHTMLAlternate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, page, want string
	}{
		{"mastodon", `<html><head><link href="https://social.example/users/alice/statuses/1" rel="alternate" type="application/activity+json"></head></html>`, "https://social.example/users/alice/statuses/1"},
		{"upper-case tag and rel", `<HTML><HEAD><LINK REL="ALTERNATE" TYPE="application/activity+json" HREF="/n/1"></HEAD></HTML>`, "https://social.example/n/1"},
		{"self-closing", `<link rel="alternate" type="application/activity+json" href="/n/2"/>`, "https://social.example/n/2"},
		{"rel token list", `<link rel="canonical alternate" type="application/activity+json" href="/n/3">`, "https://social.example/n/3"},
		{"ld+json with profile", `<link rel="alternate" type='application/ld+json; profile="https://www.w3.org/ns/activitystreams"' href="/n/4">`, "https://social.example/n/4"},
		{"base href", `<base href="https://cdn.social.example/"><link rel="alternate" type="application/activity+json" href="n/5">`, "https://cdn.social.example/n/5"},
		{"first of several", `<link rel="alternate" type="application/rss+xml" href="/feed"><link rel="alternate" type="application/activity+json" href="/n/6"><link rel="alternate" type="application/activity+json" href="/n/7">`, "https://social.example/n/6"},
		{"in body too", `<html><body><link rel="alternate" type="application/activity+json" href="/n/8"></body></html>`, "https://social.example/n/8"},
		{"inside a comment ignored", `<!-- <link rel="alternate" type="application/activity+json" href="/n/9"> -->`, ""},
		{"inside script ignored", `<script>"<link rel='alternate' type='application/activity+json' href='/n/10'>"</script>`, ""},
		{"wrong type", `<link rel="alternate" type="application/json" href="/n/1">`, ""},
		{"no rel", `<link type="application/activity+json" href="/n/1">`, ""},
		{"javascript href", `<link rel="alternate" type="application/activity+json" href="javascript:alert(1)">`, ""},
		{"empty", ``, ""},
		{"unclosed tags", `<html><head><link rel="alternate" type="application/activity+json" href="/n/11"`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fetch.HTMLAlternate([]byte(tc.page), pageBase); got != tc.want {
				t.Errorf("= %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseJRDAndHostMeta(t *testing.T) {
	t.Parallel()
	j, err := fetch.ParseJRD([]byte(`{"subject":"acct:a@b.example","aliases":["x",7],"links":[{"rel":"self","type":"application/activity+json","href":"https://b.example/u/a","properties":{"k":"v","n":1}},{"href":"norel"}]}`))
	if err != nil || len(j.Links) != 1 || j.Links[0].Properties["k"] != "v" || len(j.Aliases) != 1 {
		t.Fatalf("ParseJRD = %+v, %v", j, err)
	}
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"mastodon", `<?xml version="1.0" encoding="UTF-8"?><XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0"><Link rel="lrdd" template="https://s.example/.well-known/webfinger?resource={uri}"/></XRD>`, "https://s.example/.well-known/webfinger?resource={uri}", true},
		{"lrdd after other links", `<XRD><Link rel="other" template="x{uri}"/><Link rel="lrdd" type="application/jrd+json" template="https://s.example/wf?r={uri}"/></XRD>`, "https://s.example/wf?r={uri}", true},
		{"template without {uri}", `<XRD><Link rel="lrdd" template="https://s.example/wf"/></XRD>`, "", false},
		{"no lrdd", `<XRD></XRD>`, "", false},
		{"not XML", `{"links":[]}`, "", false},
		{"entity not expanded", `<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><XRD><Link rel="lrdd" template="&e;{uri}"/></XRD>`, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := fetch.ParseHostMeta([]byte(tc.in))
			if (err == nil) != tc.ok || got != tc.want {
				t.Fatalf("= %q, %v", got, err)
			}
		})
	}
}
