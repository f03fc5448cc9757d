package origin_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/fedkit/fedkit/origin"
)

// fakeResolver answers from a fixed result and counts calls.
type fakeResolver struct {
	res   origin.Resolution
	err   error
	calls int
}

func (f *fakeResolver) ResolveFresh(ctx context.Context, did string) (origin.Resolution, error) {
	f.calls++
	return f.res, f.err
}

const testDID = "did:plc:ewvi7nxzyoun6zhxrhs64oiz"

var (
	bridged = origin.Resolution{DID: testDID, Handle: "alice.lemmy.world.ap.tdpl.io", PDS: "https://pds.tdpl.io", HandleDID: testDID}
	asserts = origin.Fields{Origin: "lemmy.world", Username: "Alice", URL: "https://lemmy.world/u/Alice", Software: "Lemmy"}
)

func str(p *string) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprintf("%q", *p)
}

func writeString(w origin.Write) string {
	return str(w.Origin) + " " + str(w.Username) + " " + str(w.URL) + " " + str(w.Software)
}

func TestAdmit(t *testing.T) {
	t.Parallel()
	mod := func(f func(*origin.Resolution)) origin.Resolution { r := bridged; f(&r); return r }
	const (
		admitted = `"lemmy.world" "Alice" "https://lemmy.world/u/Alice" "lemmy"`
		cleared  = `"" "" "" ""`
		nothing  = "NULL NULL NULL NULL"
	)
	tests := []struct {
		name      string
		res       origin.Resolution
		err       error
		fields    origin.Fields
		known     bool
		outcome   origin.Outcome
		reason    origin.Reason
		write     string
		wantCalls int
	}{
		{"bridged and verified admits", bridged, nil, asserts, true, origin.OutcomeAdmit, origin.ReasonAdmitted, admitted, 1},
		{"unknown user admitted", bridged, nil, asserts, false, origin.OutcomeAdmit, origin.ReasonAdmitted, admitted, 1},
		{"trusted host with upper case, default port and dot", mod(func(r *origin.Resolution) { r.PDS = "HTTPS://PDS.TDPL.IO.:443/" }), nil, asserts, true, origin.OutcomeAdmit, origin.ReasonAdmitted, admitted, 1},
		{"dropped field stored as clear", bridged, nil, origin.Fields{Origin: "lemmy.world", Username: "Alice", URL: "http://lemmy.world/u/Alice"}, true,
			origin.OutcomeAdmit, origin.ReasonAdmitted, `"lemmy.world" "Alice" "" ""`, 1},
		{"handle with at:// prefix tolerated", mod(func(r *origin.Resolution) { r.Handle = "at://Alice.lemmy.world.ap.tdpl.io" }), nil, asserts, true, origin.OutcomeAdmit, origin.ReasonAdmitted, admitted, 1},
		{"untrusted PDS clears known row", mod(func(r *origin.Resolution) { r.PDS = "https://bsky.social" }), nil, asserts, true, origin.OutcomeClear, origin.ReasonUntrustedPDS, cleared, 1},
		{"untrusted PDS drops unknown user", mod(func(r *origin.Resolution) { r.PDS = "https://bsky.social" }), nil, asserts, false, origin.OutcomeDrop, origin.ReasonUntrustedPDS, nothing, 1},
		{"no PDS", mod(func(r *origin.Resolution) { r.PDS = "" }), nil, asserts, true, origin.OutcomeClear, origin.ReasonUntrustedPDS, cleared, 1},
		{"PDS on trusted host but other port", mod(func(r *origin.Resolution) { r.PDS = "https://pds.tdpl.io:8443" }), nil, asserts, true, origin.OutcomeClear, origin.ReasonUntrustedPDS, cleared, 1},
		{"handle outside the PDS registrable domain", mod(func(r *origin.Resolution) { r.Handle = "alice.evil.test" }), nil, asserts, true, origin.OutcomeClear, origin.ReasonHandleDomainMismatch, cleared, 1},
		{"handle look-alike domain", mod(func(r *origin.Resolution) { r.Handle = "alice.eviltdpl.io" }), nil, asserts, false, origin.OutcomeDrop, origin.ReasonHandleDomainMismatch, nothing, 1},
		{"handle is a public suffix", mod(func(r *origin.Resolution) { r.Handle = "co.uk" }), nil, asserts, true, origin.OutcomeClear, origin.ReasonHandleDomainMismatch, cleared, 1},
		{"handle resolves to another DID is unverified", mod(func(r *origin.Resolution) { r.HandleDID = "did:plc:other" }), nil, asserts, true, origin.OutcomeRetry, origin.ReasonHandleUnverified, nothing, 1},
		{"handle did not resolve", mod(func(r *origin.Resolution) { r.HandleDID = "" }), nil, asserts, true, origin.OutcomeRetry, origin.ReasonHandleUnverified, nothing, 1},
		{"no declared handle", mod(func(r *origin.Resolution) { r.Handle = "" }), nil, asserts, false, origin.OutcomeRetry, origin.ReasonHandleUnverified, nothing, 1},
		{"handle.invalid", mod(func(r *origin.Resolution) { r.Handle = "handle.invalid" }), nil, asserts, true, origin.OutcomeRetry, origin.ReasonHandleUnverified, nothing, 1},
		{"document for another DID", mod(func(r *origin.Resolution) { r.DID = "did:plc:other" }), nil, asserts, true, origin.OutcomeClear, origin.ReasonSubjectMismatch, cleared, 1},
		{"transient resolution failure retries", origin.Resolution{}, errors.New("plc: 503"), asserts, true, origin.OutcomeRetry, origin.ReasonTransient, nothing, 1},
		{"unresolvable DID clears", origin.Resolution{}, fmt.Errorf("plc: 404: %w", origin.ErrUnresolvable), asserts, true, origin.OutcomeClear, origin.ReasonUnresolvable, cleared, 1},
		{"unresolvable DID drops unknown", origin.Resolution{}, fmt.Errorf("plc: 404: %w", origin.ErrUnresolvable), asserts, false, origin.OutcomeDrop, origin.ReasonUnresolvable, nothing, 1},
		{"no fields asserted clears known row without resolving", bridged, nil, origin.Fields{}, true, origin.OutcomeClear, origin.ReasonNotAsserted, cleared, 0},
		{"no fields asserted leaves new row NULL", bridged, nil, origin.Fields{}, false, origin.OutcomeAdmit, origin.ReasonNotAsserted, nothing, 0},
		{"nothing valid clears known row without resolving", bridged, nil, origin.Fields{Origin: "not a domain", Username: ""}, true, origin.OutcomeClear, origin.ReasonNothingValid, cleared, 0},
		{"nothing valid on new row is a visible clear", bridged, nil, origin.Fields{Software: "bad software!"}, false, origin.OutcomeAdmit, origin.ReasonNothingValid, cleared, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fr := &fakeResolver{res: tc.res, err: tc.err}
			a, err := origin.NewAdmitter(fr, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io", "https://pds.bridge.test:8443"}})
			if err != nil {
				t.Fatal(err)
			}
			d := a.Admit(context.Background(), origin.Event{DID: testDID, Fields: tc.fields, Known: tc.known})
			if d.Outcome != tc.outcome || d.Reason != tc.reason {
				t.Errorf("Admit = %v/%s, want %v/%s", d.Outcome, d.Reason, tc.outcome, tc.reason)
			}
			if got := writeString(d.Write); got != tc.write {
				t.Errorf("Write = %s, want %s", got, tc.write)
			}
			if fr.calls != tc.wantCalls {
				t.Errorf("resolver calls = %d, want %d", fr.calls, tc.wantCalls)
			}
			if (d.Outcome == origin.OutcomeRetry && tc.err != nil) != (d.Err != nil) {
				t.Errorf("Err = %v", d.Err)
			}
		})
	}
}

func TestAdmitCancelledIsRetry(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fr := &fakeResolver{err: fmt.Errorf("%w: %w", origin.ErrUnresolvable, context.Canceled)}
	a, _ := origin.NewAdmitter(fr, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io"}})
	if d := a.Admit(ctx, origin.Event{DID: testDID, Fields: asserts, Known: true}); d.Outcome != origin.OutcomeRetry {
		t.Fatalf("cancelled resolution = %v, want retry (a cancel proves nothing about the DID)", d.Outcome)
	}
}

func TestAdmitNoTrustedHostsDeniesAll(t *testing.T) {
	t.Parallel()
	a, err := origin.NewAdmitter(&fakeResolver{res: bridged}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := a.Admit(context.Background(), origin.Event{DID: testDID, Fields: asserts, Known: true}); d.Outcome != origin.OutcomeClear {
		t.Fatalf("default config admitted: %v", d.Outcome)
	}
}

func TestNewAdmitterErrors(t *testing.T) {
	t.Parallel()
	if _, err := origin.NewAdmitter(nil, nil); err == nil {
		t.Error("nil resolver accepted")
	}
	if _, err := origin.NewAdmitter(&fakeResolver{}, &origin.AdmitConfig{TrustedHosts: []string{"https://pds.tdpl.io/path"}}); err == nil {
		t.Error("trusted host with a path accepted")
	}
}

func TestTrustedHosts(t *testing.T) {
	t.Parallel()
	th, err := origin.NewTrustedHosts([]string{"PDS.tdpl.io", "", "http://pds.local.test:8080", "https://pds.bridge.test:443"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, pds string
		want      bool
	}{
		{"exact", "https://pds.tdpl.io", true},
		{"trailing slash", "https://pds.tdpl.io/", true},
		{"upper case", "HTTPS://PDS.TDPL.IO", true},
		{"default port", "https://pds.tdpl.io:443", true},
		{"trailing dot", "https://pds.tdpl.io.", true},
		{"schemeless", "pds.tdpl.io", true},
		{"schemeful entry with default port", "https://pds.bridge.test", true},
		{"non-default port kept", "http://pds.local.test:8080", true},
		{"non-default port missing", "http://pds.local.test", false},
		{"other port", "https://pds.tdpl.io:8443", false},
		{"subdomain", "https://x.pds.tdpl.io", false},
		{"parent", "https://tdpl.io", false},
		{"empty", "", false},
		{"unparsable", "https://[::1", false},
		{"userinfo", "https://u@pds.tdpl.io", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := th.Contains(tc.pds); got != tc.want {
				t.Errorf("Contains(%q) = %v", tc.pds, got)
			}
		})
	}
	var zero origin.TrustedHosts
	if zero.Contains("https://pds.tdpl.io") {
		t.Error("zero TrustedHosts trusts")
	}
}

func TestClearOnRefresh(t *testing.T) {
	t.Parallel()
	a, _ := origin.NewAdmitter(&fakeResolver{}, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io"}})
	mod := func(f func(*origin.Resolution)) origin.Resolution { r := bridged; f(&r); return r }
	tests := []struct {
		name   string
		res    origin.Resolution
		clear  bool
		reason origin.Reason
	}{
		{"still bridged", bridged, false, ""},
		{"moved to another PDS", mod(func(r *origin.Resolution) { r.PDS = "https://bsky.social" }), true, origin.ReasonUntrustedPDS},
		{"PDS removed", mod(func(r *origin.Resolution) { r.PDS = "" }), true, origin.ReasonUntrustedPDS},
		{"handle left the bridge domain", mod(func(r *origin.Resolution) { r.Handle = "alice.example.com" }), true, origin.ReasonHandleDomainMismatch},
		{"handle unverified only", mod(func(r *origin.Resolution) { r.HandleDID = "" }), false, ""},
		{"no handle declared", mod(func(r *origin.Resolution) { r.Handle = "" }), false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, r := a.ClearOnRefresh(tc.res)
			if c != tc.clear || r != tc.reason {
				t.Errorf("ClearOnRefresh = %v, %q; want %v, %q", c, r, tc.clear, tc.reason)
			}
		})
	}
}

func TestClearOnAccountStatus(t *testing.T) {
	t.Parallel()
	for status, want := range map[string]bool{"deleted": true, "takendown": true, "suspended": false, "deactivated": false, "": false} {
		if got := origin.ClearOnAccountStatus(status); got != want {
			t.Errorf("ClearOnAccountStatus(%q) = %v", status, got)
		}
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	if !(origin.Write{}).IsZero() || origin.ClearAll().IsZero() {
		t.Fatal("IsZero wrong")
	}
	if got := writeString(origin.ClearAll()); got != `"" "" "" ""` {
		t.Fatalf("ClearAll = %s", got)
	}
	if origin.OutcomeRetry.String() != "retry" || origin.Outcome(0).String() != "Outcome(0)" {
		t.Fatal("Outcome.String")
	}
}
