package fetch_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/fetch"
)

func FuzzParseJRD(f *testing.F) {
	f.Add([]byte(`{"subject":"acct:a@b.example","links":[{"rel":"self","type":"application/activity+json","href":"https://b.example/u/a"}]}`))
	f.Add([]byte(`{"subject":"acct:rust@lemmy.example","links":[{"rel":"self","type":"application/activity+json","href":"https://lemmy.example/c/rust","properties":{"https://www.w3.org/ns/activitystreams#type":"Group"}}]}`))
	f.Add([]byte(`{"subject":7,"links":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := fetch.ParseJRD(b)
		if err != nil {
			return
		}
		if j.Subject == "" {
			t.Fatal("accepted a JRD without subject")
		}
		for _, a := range j.Actors() {
			if a.Href == "" || (a.Type != "application/activity+json" && !strings.HasPrefix(a.Type, "application/ld+json")) {
				t.Fatalf("bad actor %+v", a)
			}
		}
	})
}

func FuzzParseNodeInfo(f *testing.F) {
	f.Add([]byte(mastodonNodeInfo))
	f.Add([]byte(misskeyNodeInfo))
	f.Add([]byte(`{"software":{"name":"ÄBC"},"usage":{"users":{"total":1e300}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ni, err := fetch.ParseNodeInfo(b)
		if err != nil {
			return
		}
		if ni.Software.Name != strings.ToLower(ni.Software.Name) {
			t.Fatalf("name not lower-cased: %q", ni.Software.Name)
		}
		for _, p := range []*int64{ni.Usage.Users.Total, ni.Usage.Users.ActiveMonth, ni.Usage.Users.ActiveHalfyear, ni.Usage.LocalPosts, ni.Usage.LocalComments} {
			if p != nil && *p < 0 {
				t.Fatalf("negative count %d", *p)
			}
		}
	})
}

func FuzzParseNodeInfoLinks(f *testing.F) {
	f.Add([]byte(`{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/2.1","href":"https://a.example/ni"}]}`))
	f.Add([]byte(`{"links":[{"rel":"http://nodeinfo.diaspora.software/ns/schema/9.9.9.9.9","href":"x"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		href, v, err := fetch.ParseNodeInfoLinks(b)
		if err == nil && (href == "" || v == "") {
			t.Fatalf("empty result without error: %q %q", href, v)
		}
	})
}

func FuzzParseHostMeta(f *testing.F) {
	f.Add([]byte(`<?xml version="1.0"?><XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0"><Link rel="lrdd" template="https://s.example/wf?resource={uri}"/></XRD>`))
	f.Add([]byte(`<XRD><Link rel="lrdd" template="{uri}"/><Link/></XRD>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tmpl, err := fetch.ParseHostMeta(b)
		if err == nil && !strings.Contains(tmpl, "{uri}") {
			t.Fatalf("template without {uri}: %q", tmpl)
		}
	})
}

func FuzzHTMLAlternate(f *testing.F) {
	f.Add([]byte(`<html><head><link rel="alternate" type="application/activity+json" href="/n/1"></head></html>`))
	f.Add([]byte(`<base href="https://cdn.example/"><LINK REL="Alternate canonical" TYPE="application/activity+json" HREF="n"/>`))
	f.Add([]byte(`<script><link rel=alternate type=application/activity+json href=/x></script>`))
	base, _ := url.Parse("https://social.example/@a/1")
	f.Fuzz(func(t *testing.T, b []byte) {
		got := fetch.HTMLAlternate(b, base)
		if got == "" {
			return
		}
		u, err := url.Parse(got)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			t.Fatalf("returned %q", got)
		}
	})
}

func FuzzLinkHeaderAlternate(f *testing.F) {
	f.Add(`<https://social.example/n/1>; rel="alternate"; type="application/activity+json"`)
	f.Add(`</n/1>; rel=alternate; type="application/ld+json; profile=\"https://www.w3.org/ns/activitystreams\"", <x>; rel="self"`)
	base, _ := url.Parse("https://social.example/@a/1")
	f.Fuzz(func(t *testing.T, h string) {
		got := fetch.LinkHeaderAlternate([]string{h}, base)
		if got == "" {
			return
		}
		u, err := url.Parse(got)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			t.Fatalf("returned %q", got)
		}
	})
}

func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{"@alice@social.example", "acct:Bob@Lemmy.World", "a@b@c", "x@bücher.example:8080", "@@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := fetch.ParseAddress(s)
		if err != nil {
			return
		}
		again, err := fetch.ParseAddress(a.URI())
		if err != nil || again != a {
			t.Fatalf("round trip of %q: %v, %v", a.URI(), again, err)
		}
	})
}
