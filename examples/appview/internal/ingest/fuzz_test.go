package ingest

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fedkit/fedkit/examples/appview/internal/jetstream"
	"github.com/fedkit/fedkit/origin"
)

// bridgedResolver resolves every DID onto the trusted bridge, verified, so
// fuzzed records reach the admission rules rather than stop at resolution.
type bridgedResolver struct{}

func (bridgedResolver) ResolveFresh(_ context.Context, did string) (origin.Resolution, error) {
	return origin.Resolution{DID: did, Handle: "news.lemmy.world.ap.bridge.test", PDS: "https://pds.bridge.test", HandleDID: did}, nil
}

var commitSeeds = []string{
	`{"did":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa","time_us":1780000000000001,"kind":"commit","commit":{"rev":"3laaa","operation":"update","collection":"app.bsky.actor.profile","rkey":"self","cid":"bafyrei","record":{"$type":"app.bsky.actor.profile","displayName":"Alice","origin":"lemmy.world","originUsername":"Alice","originUrl":"https://lemmy.world/u/Alice","originSoftware":"lemmy"}}}`,
	`{"did":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa","time_us":1780000000000002,"kind":"commit","commit":{"rev":"3laab","operation":"create","collection":"social.coves.community.profile","rkey":"self","cid":"bafyrei","record":{"name":"news","origin":"Lemmy.World","originUrl":"https://lemmy.world/c/news","originSoftware":"Lemmy","hostedBy":"did:web:lemmy.world"}}}`,
	`{"did":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa","time_us":1780000000000003,"kind":"commit","commit":{"rev":"3laac","operation":"create","collection":"app.bsky.feed.post","rkey":"3lp1","cid":"bafyrei","record":{"text":"he\u0000llo \u202e","createdAt":"2026-11-29T12:00:00.123Z"}}}`,
	`{"did":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa","time_us":1780000000000004,"kind":"commit","commit":{"rev":"3laad","operation":"create","collection":"app.bsky.feed.post","rkey":"3lp2","cid":"bafyrei","record":{"text":7,"createdAt":"yesterday"}}}`,
	`{"did":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa","time_us":1780000000000005,"kind":"commit","commit":{"rev":"3laae","operation":"update","collection":"app.bsky.actor.profile","rkey":"self","cid":"bafyrei","record":{"origin":"co.uk","originUsername":"a\u0000b","originUrl":"javascript:alert(1)","originSoftware":"\u0000"}}}`,
	`{"did":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa","time_us":1780000000000006,"kind":"commit","commit":{"rev":"3laaf","operation":"delete","collection":"app.bsky.feed.post","rkey":"3lp1"}}`,
}

// FuzzCommitRecord holds what the ingester reads from a commit record,
// after the frame layer, to what it stores: no NUL (PostgreSQL text refuses
// it), valid UTF-8, and origin fields that Sanitize keeps as they are.
func FuzzCommitRecord(f *testing.F) {
	for _, s := range commitSeeds {
		f.Add([]byte(s))
	}
	adm, err := origin.NewAdmitter(bridgedResolver{}, &origin.AdmitConfig{TrustedHosts: []string{"pds.bridge.test"}})
	if err != nil {
		f.Fatal(err)
	}
	storable := func(t *testing.T, what, s string) {
		t.Helper()
		if strings.IndexByte(s, 0) >= 0 || !utf8.ValidString(s) {
			t.Fatalf("%s %q would not store", what, s)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := jetstream.Parse(b)
		if err != nil || fr.Kind != jetstream.KindCommit || fr.Commit.Operation == jetstream.OpDelete {
			return
		}
		c := fr.Commit
		for what, s := range map[string]string{"did": fr.DID, "rkey": c.RKey, "collection": c.Collection, "rev": c.Rev, "cid": c.CID} {
			storable(t, what, s)
		}
		switch c.Collection {
		case CollectionPost:
			p, err := postOf(fr)
			if err != nil {
				return
			}
			storable(t, "text", p.Text)
			if p.URI != "at://"+fr.DID+"/"+c.Collection+"/"+c.RKey || p.CreatedAt.IsZero() {
				t.Fatalf("post %+v", p)
			}
		case CollectionProfile:
			rec, err := decodeProfile(c.Record)
			if err != nil {
				return
			}
			storable(t, "displayName", rec.DisplayName)
			storable(t, "description", rec.Description)
			d := adm.Admit(context.Background(), origin.Event{DID: fr.DID,
				Fields: origin.Fields{Origin: rec.Origin, Username: rec.OriginUsername, URL: rec.OriginURL, Software: rec.OriginSoftware}})
			w := d.Write
			got := origin.Fields{Origin: deref(w.Origin), Username: deref(w.Username), URL: deref(w.URL), Software: deref(w.Software)}
			if again, _ := origin.Sanitize(got); again != got {
				t.Fatalf("stored %+v, sanitised again %+v", got, again)
			}
			for _, s := range []string{got.Origin, got.Username, got.URL, got.Software} {
				storable(t, "origin field", s)
			}
		case CollectionCommunityProfile:
			rec, err := decodeProfile(c.Record)
			if err != nil {
				return
			}
			storable(t, "name", rec.Name)
			storable(t, "hostedBy", rec.HostedBy)
			d := adm.AdmitCommunity(context.Background(), origin.CommunityEvent{DID: fr.DID,
				Fields: origin.CommunityFields{Origin: rec.Origin, URL: rec.OriginURL, Software: rec.OriginSoftware}})
			w := d.Write
			got := origin.CommunityFields{Origin: deref(w.Origin), URL: deref(w.URL), Software: deref(w.Software)}
			if again, _ := origin.SanitizeCommunity(got); again != got {
				t.Fatalf("stored %+v, sanitised again %+v", got, again)
			}
			for _, s := range []string{got.Origin, got.URL, got.Software} {
				storable(t, "origin field", s)
			}
		}
	})
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
