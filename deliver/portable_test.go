package deliver_test

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

const testDID = "did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2"

func TestGatewayInboxes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		inbox    string
		gateways []string
		want     []string
		err      error
	}{
		{"FEPExample", "ap://" + testDID + "/actor/inbox", []string{"https://social.example"},
			[]string{"https://social.example/.well-known/apgateway/" + testDID + "/actor/inbox"}, nil},
		{"EncodedColons", "ap://" + strings.ReplaceAll(testDID, ":", "%3A") + "/actor/inbox", []string{"https://social.example/"},
			[]string{"https://social.example/.well-known/apgateway/" + testDID + "/actor/inbox"}, nil},
		{"EveryGatewayInOrder", "ap://" + testDID + "/inbox", []string{"https://b.example", "http://a.example:8080"},
			[]string{"https://b.example/.well-known/apgateway/" + testDID + "/inbox",
				"http://a.example:8080/.well-known/apgateway/" + testDID + "/inbox"}, nil},
		{"QueryKeptFragmentDropped", "ap://" + testDID + "/inbox?x=1#frag", []string{"https://gw.example"},
			[]string{"https://gw.example/.well-known/apgateway/" + testDID + "/inbox?x=1"}, nil},
		{"BadGatewaysLeftOut", "ap://" + testDID + "/inbox",
			[]string{"ftp://gw.example", "https://gw.example/path", "https://u@gw.example", "https://gw.example?q", "gw.example", ""},
			[]string{}, nil},
		{"NoGateways", "ap://" + testDID + "/inbox", nil, []string{}, nil},
		{"HTTPSInbox", "https://social.example/inbox", []string{"https://gw.example"}, nil, deliver.ErrNotPortable},
		{"NotADID", "ap://social.example/inbox", []string{"https://gw.example"}, nil, deliver.ErrNotPortable},
		{"EmptyDID", "ap://did:/inbox", []string{"https://gw.example"}, nil, deliver.ErrNotPortable},
		{"BadEscape", "ap://did%zz/inbox", []string{"https://gw.example"}, nil, deliver.ErrNotPortable},
		{"ControlCharInDID", "ap://did:\x05", []string{"http://0"}, nil, deliver.ErrNotPortable},
		{"NoMethodSpecificID", "ap://did:key:/inbox", []string{"https://gw.example"}, nil, deliver.ErrNotPortable},
		{"UppercaseMethod", "ap://did:KEY:z6Mk/inbox", []string{"https://gw.example"}, nil, deliver.ErrNotPortable},
		{"ControlCharInPath", "ap://" + testDID + "/in\nbox", []string{"https://gw.example"}, nil, deliver.ErrNotPortable},
		{"DIDWeb", "ap://did:web:a.example/inbox", []string{"https://gw.example"},
			[]string{"https://gw.example/.well-known/apgateway/did:web:a.example/inbox"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := deliver.GatewayInboxes(tc.inbox, tc.gateways)
			if !errors.Is(err, tc.err) || (tc.err == nil && !slices.Equal(got, tc.want)) {
				t.Fatalf("GatewayInboxes = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestSendPortableDeliversThroughEveryGateway(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	gw1 := newInbox(t, b.clock, nil)
	gw2 := newInbox(t, b.clock, nil)
	alice := "ap://" + testDID + "/actor/inbox"
	bob := "ap://did:key:z6MkBob/actor/inbox"
	err := b.d.SendPortable(context.Background(), testKeyID, activity("1"), []deliver.PortableInbox{
		{Inbox: alice, Gateways: []string{gw1.URL(""), gw2.URL("")}},
		{Inbox: bob, Gateways: []string{gw1.URL("")}},
		{Inbox: alice, Gateways: []string{gw2.URL("")}}, // named twice: sent once
	}, deliver.Batch{Tag: "portable"})
	if err != nil {
		t.Fatal(err)
	}
	if n := b.runDue(t); n != 3 {
		t.Fatalf("%d deliveries, want one per distinct gateway URL (3)", n)
	}
	aliceAt := "/.well-known/apgateway/" + testDID + "/actor/inbox"
	bobAt := "/.well-known/apgateway/did:key:z6MkBob/actor/inbox"
	for _, tc := range []struct {
		gw   *inbox
		want []string
	}{{gw1, []string{bobAt, aliceAt}}, {gw2, []string{aliceAt}}} {
		var paths []string
		for _, r := range tc.gw.requests() {
			if r.VerifyErr != nil || r.Body != string(activity("1")) {
				t.Fatalf("gateway got %+v", r)
			}
			paths = append(paths, r.Path)
		}
		slices.Sort(paths)
		if !slices.Equal(paths, tc.want) {
			t.Fatalf("gateway %s got %q, want %q", tc.gw.URL(""), paths, tc.want)
		}
	}
	if st, _ := b.d.Status(context.Background(), "portable"); st != (driver.BatchStatus{Delivered: 3}) {
		t.Fatalf("status %+v", st)
	}
}

func TestSendPortableRefusals(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	err := b.d.SendPortable(ctx, testKeyID, activity("1"), []deliver.PortableInbox{{Inbox: "https://social.example/inbox", Gateways: []string{"https://gw.example"}}}, deliver.Batch{})
	if !errors.Is(err, deliver.ErrNotPortable) {
		t.Fatalf("https inbox: %v, want ErrNotPortable", err)
	}
	err = b.d.SendPortable(ctx, testKeyID, activity("1"), []deliver.PortableInbox{{Inbox: "ap://" + testDID + "/inbox"}}, deliver.Batch{})
	if !errors.Is(err, deliver.ErrNoInboxes) {
		t.Fatalf("no gateways: %v, want ErrNoInboxes", err)
	}
}

func FuzzGatewayInboxes(f *testing.F) {
	f.Add("ap://"+testDID+"/actor/inbox", "https://gw.example")
	f.Add("ap://did%3Akey%3Az6Mk/inbox?x=1#f", "http://gw.example:8080/")
	f.Add("ap://did:/inbox", "https://gw.example")
	f.Add("ap://did:web:a.example%2Fx/inbox", "https://gw.example/path")
	f.Fuzz(func(t *testing.T, inbox, gateway string) {
		got, err := deliver.GatewayInboxes(inbox, []string{gateway})
		if err != nil {
			if !errors.Is(err, deliver.ErrNotPortable) || got != nil {
				t.Fatalf("GatewayInboxes = %q, %v", got, err)
			}
			return
		}
		if len(got) > 1 {
			t.Fatalf("%d URLs from one gateway", len(got))
		}
		for _, u := range got {
			p, err := url.Parse(u)
			if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" ||
				!strings.HasPrefix(p.Path, "/.well-known/apgateway/did:") || p.Fragment != "" {
				t.Fatalf("gateway URL %q (%v)", u, err)
			}
		}
	})
}
