package origin_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/origin"
)

// communityResolver answers AdmitCommunity's resolutions and counts them.
type communityResolver struct {
	res   origin.Resolution
	err   error
	calls int
}

func (c *communityResolver) ResolveFresh(ctx context.Context, did string) (origin.Resolution, error) {
	c.calls++
	if err := ctx.Err(); err != nil {
		return origin.Resolution{}, err
	}
	return c.res, c.err
}

func cwrite(w origin.Write) string {
	s := func(p *string) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprintf("%q", *p)
	}
	return s(w.Origin) + " " + s(w.Username) + " " + s(w.URL) + " " + s(w.Software)
}

func TestSanitizeCommunity(t *testing.T) {
	t.Parallel()
	rj := func(f origin.Field, r origin.RejectReason) origin.Rejection {
		return origin.Rejection{Field: f, Reason: r}
	}
	tests := []struct {
		name string
		in   origin.CommunityFields
		want origin.CommunityFields
		rej  []origin.Rejection
	}{
		{"empty", origin.CommunityFields{}, origin.CommunityFields{}, nil},
		{"all valid, normalised",
			origin.CommunityFields{Origin: "Lemmy.World.", URL: "https://lemmy.world/c/rust", Software: " Lemmy "},
			origin.CommunityFields{Origin: "lemmy.world", URL: "https://lemmy.world/c/rust", Software: "lemmy"}, nil},
		{"origin alone needs no username", origin.CommunityFields{Origin: "lemmy.world"}, origin.CommunityFields{Origin: "lemmy.world"}, nil},
		{"IDN origin to ASCII", origin.CommunityFields{Origin: "bücher.example"}, origin.CommunityFields{Origin: "xn--bcher-kva.example"}, nil},
		{"URL origin refused", origin.CommunityFields{Origin: "https://lemmy.world"}, origin.CommunityFields{},
			[]origin.Rejection{rj(origin.FieldOrigin, origin.RejectInvalidDomain)}},
		{"IP origin refused", origin.CommunityFields{Origin: "192.0.2.1"}, origin.CommunityFields{},
			[]origin.Rejection{rj(origin.FieldOrigin, origin.RejectInvalidDomain)}},
		{"single-label origin refused", origin.CommunityFields{Origin: "localhost"}, origin.CommunityFields{},
			[]origin.Rejection{rj(origin.FieldOrigin, origin.RejectInvalidDomain)}},
		{"URL without origin", origin.CommunityFields{URL: "https://lemmy.world/c/rust"}, origin.CommunityFields{},
			[]origin.Rejection{rj(origin.FieldURL, origin.RejectNoOrigin)}},
		{"URL on another host", origin.CommunityFields{Origin: "lemmy.world", URL: "https://evil.test/c/rust"}, origin.CommunityFields{Origin: "lemmy.world"},
			[]origin.Rejection{rj(origin.FieldURL, origin.RejectHostMismatch)}},
		{"URL over http", origin.CommunityFields{Origin: "lemmy.world", URL: "http://lemmy.world/c/rust"}, origin.CommunityFields{Origin: "lemmy.world"},
			[]origin.Rejection{rj(origin.FieldURL, origin.RejectNotHTTPS)}},
		{"URL with userinfo", origin.CommunityFields{Origin: "lemmy.world", URL: "https://a@lemmy.world/c/rust"}, origin.CommunityFields{Origin: "lemmy.world"},
			[]origin.Rejection{rj(origin.FieldURL, origin.RejectUserinfo)}},
		{"URL too long", origin.CommunityFields{Origin: "lemmy.world", URL: "https://lemmy.world/" + strings.Repeat("a", origin.MaxURLBytes)}, origin.CommunityFields{Origin: "lemmy.world"},
			[]origin.Rejection{rj(origin.FieldURL, origin.RejectTooLong)}},
		{"software without origin", origin.CommunityFields{Software: "lemmy"}, origin.CommunityFields{},
			[]origin.Rejection{rj(origin.FieldSoftware, origin.RejectNoOrigin)}},
		{"software invalid", origin.CommunityFields{Origin: "lemmy.world", Software: "lem my"}, origin.CommunityFields{Origin: "lemmy.world"},
			[]origin.Rejection{rj(origin.FieldSoftware, origin.RejectInvalidSoftware)}},
		{"software 65 bytes", origin.CommunityFields{Origin: "lemmy.world", Software: strings.Repeat("a", 65)}, origin.CommunityFields{Origin: "lemmy.world"},
			[]origin.Rejection{rj(origin.FieldSoftware, origin.RejectInvalidSoftware)}},
		{"bad origin takes URL and software with it",
			origin.CommunityFields{Origin: "lemmy world", URL: "https://lemmy.world/c/rust", Software: "lemmy"}, origin.CommunityFields{},
			[]origin.Rejection{rj(origin.FieldOrigin, origin.RejectInvalidDomain), rj(origin.FieldURL, origin.RejectNoOrigin), rj(origin.FieldSoftware, origin.RejectNoOrigin)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, rej := origin.SanitizeCommunity(tc.in)
			if got != tc.want || fmt.Sprint(rej) != fmt.Sprint(tc.rej) {
				t.Fatalf("= %+v %v; want %+v %v", got, rej, tc.want, tc.rej)
			}
			if again, rej2 := origin.SanitizeCommunity(got); again != got || len(rej2) != 0 {
				t.Fatalf("not idempotent: %+v %v", again, rej2)
			}
		})
	}
}

func TestAdmitCommunity(t *testing.T) {
	t.Parallel()
	const did = "did:plc:ewvi7nxzyoun6zhxrhs64oiz"
	onBridge := origin.Resolution{DID: did, Handle: "rust.lemmy.world.ap.tdpl.io", PDS: "https://pds.tdpl.io", HandleDID: did}
	native := origin.Resolution{DID: did, Handle: "c-nba.dev.coves.social", PDS: "https://pds.coves.social", HandleDID: did}
	mod := func(base origin.Resolution, f func(*origin.Resolution)) origin.Resolution { f(&base); return base }
	bridgeAsserts := origin.CommunityFields{Origin: "lemmy.world", URL: "https://lemmy.world/c/rust", Software: "Lemmy"}
	nativeAsserts := origin.CommunityFields{Origin: "coves.social", URL: "https://coves.social/c/nba", Software: "coves"}
	const (
		cleared  = `"" NULL "" ""`
		nothing  = "NULL NULL NULL NULL"
		bridgeW  = `"lemmy.world" NULL "https://lemmy.world/c/rust" "lemmy"`
		nativeW  = `"coves.social" NULL "https://coves.social/c/nba" "coves"`
		bridge   = "https://pds.tdpl.io"
		nativePD = "https://pds.coves.social"
	)
	tests := []struct {
		name    string
		res     origin.Resolution
		err     error
		fields  origin.CommunityFields
		known   bool
		outcome origin.Outcome
		reason  origin.Reason
		write   string
		bridged bool
		pds     string
		calls   int
	}{
		// The bridge may assert any well-formed origin.
		{"bridge asserts a foreign origin", onBridge, nil, bridgeAsserts, true, origin.OutcomeAdmit, origin.ReasonAdmitted, bridgeW, true, bridge, 1},
		{"bridge creates an unknown community", onBridge, nil, bridgeAsserts, false, origin.OutcomeAdmit, origin.ReasonAdmitted, bridgeW, true, bridge, 1},
		{"bridge may assert its handle's own name", onBridge, nil, origin.CommunityFields{Origin: "rust.lemmy.world.ap.tdpl.io"}, true,
			origin.OutcomeAdmit, origin.ReasonAdmitted, `"rust.lemmy.world.ap.tdpl.io" NULL "" ""`, true, bridge, 1},
		{"bridge may not assert a public suffix", onBridge, nil, origin.CommunityFields{Origin: "co.uk"}, true, origin.OutcomeClear, origin.ReasonOriginNotAllowed, cleared, true, bridge, 1},
		{"bridge with an unverified handle retries", mod(onBridge, func(r *origin.Resolution) { r.HandleDID = "" }), nil, bridgeAsserts, true,
			origin.OutcomeRetry, origin.ReasonHandleUnverified, nothing, false, bridge, 1},
		{"bridge with no declared handle retries", mod(onBridge, func(r *origin.Resolution) { r.Handle = "" }), nil, bridgeAsserts, false,
			origin.OutcomeRetry, origin.ReasonHandleUnverified, nothing, false, bridge, 1},
		{"dropped field stored as clear", onBridge, nil, origin.CommunityFields{Origin: "lemmy.world", URL: "http://lemmy.world/c/rust", Software: "lemmy"}, true,
			origin.OutcomeAdmit, origin.ReasonAdmitted, `"lemmy.world" NULL "" "lemmy"`, true, bridge, 1},

		// Trusted PDS, handle outside its registrable domain: the
		// bridge's latitude is lost, the handle's own domain rule applies.
		{"trusted PDS, foreign handle, foreign origin: cleared", mod(onBridge, func(r *origin.Resolution) { r.Handle = "c.evil.test" }), nil, bridgeAsserts, true,
			origin.OutcomeClear, origin.ReasonOriginNotAllowed, cleared, false, bridge, 1},
		{"trusted PDS, foreign handle, foreign origin: dropped", mod(onBridge, func(r *origin.Resolution) { r.Handle = "c.evil.test" }), nil, bridgeAsserts, false,
			origin.OutcomeDrop, origin.ReasonOriginNotAllowed, nothing, false, bridge, 1},
		{"trusted PDS, foreign handle, own domain: admitted", mod(onBridge, func(r *origin.Resolution) { r.Handle = "c.evil.test" }), nil, origin.CommunityFields{Origin: "evil.test"}, true,
			origin.OutcomeAdmit, origin.ReasonAdmitted, `"evil.test" NULL "" ""`, false, bridge, 1},

		// Any other repository: its verified handle's registrable domain,
		// or a parent of the handle below it.
		{"registrable domain of the handle", native, nil, nativeAsserts, true, origin.OutcomeAdmit, origin.ReasonAdmitted, nativeW, false, nativePD, 1},
		{"parent below the registrable domain", native, nil, origin.CommunityFields{Origin: "Dev.Coves.Social"}, false,
			origin.OutcomeAdmit, origin.ReasonAdmitted, `"dev.coves.social" NULL "" ""`, false, nativePD, 1},
		{"handle's own name refused", native, nil, origin.CommunityFields{Origin: "c-nba.dev.coves.social"}, true, origin.OutcomeClear, origin.ReasonOriginNotAllowed, cleared, false, nativePD, 1},
		{"look-alike refused", native, nil, origin.CommunityFields{Origin: "evilcoves.social"}, true, origin.OutcomeClear, origin.ReasonOriginNotAllowed, cleared, false, nativePD, 1},
		{"foreign origin refused", native, nil, bridgeAsserts, true, origin.OutcomeClear, origin.ReasonOriginNotAllowed, cleared, false, nativePD, 1},
		{"foreign origin on unknown community dropped", native, nil, bridgeAsserts, false, origin.OutcomeDrop, origin.ReasonOriginNotAllowed, nothing, false, nativePD, 1},
		{"public suffix refused", mod(native, func(r *origin.Resolution) { r.Handle = "c.example.co.uk" }), nil, origin.CommunityFields{Origin: "co.uk"}, true,
			origin.OutcomeClear, origin.ReasonOriginNotAllowed, cleared, false, nativePD, 1},
		{"unverified handle retries when its domain would be allowed", mod(native, func(r *origin.Resolution) { r.HandleDID = "did:plc:other" }), nil, nativeAsserts, true,
			origin.OutcomeRetry, origin.ReasonHandleUnverified, nothing, false, nativePD, 1},
		{"unverified handle never allowing the origin is refused", mod(native, func(r *origin.Resolution) { r.HandleDID = "" }), nil, bridgeAsserts, true,
			origin.OutcomeClear, origin.ReasonOriginNotAllowed, cleared, false, nativePD, 1},
		{"no declared handle retries", mod(native, func(r *origin.Resolution) { r.Handle = "" }), nil, nativeAsserts, true,
			origin.OutcomeRetry, origin.ReasonHandleUnverified, nothing, false, nativePD, 1},
		{"handle.invalid retries", mod(native, func(r *origin.Resolution) { r.Handle = "handle.invalid" }), nil, nativeAsserts, true,
			origin.OutcomeRetry, origin.ReasonHandleUnverified, nothing, false, nativePD, 1},
		{"moved off the bridge loses its foreign origin, fresh PDS reported", mod(onBridge, func(r *origin.Resolution) { r.PDS = "https://pds.elsewhere.test" }), nil, bridgeAsserts, true,
			origin.OutcomeClear, origin.ReasonOriginNotAllowed, cleared, false, "https://pds.elsewhere.test", 1},

		// Resolution failures.
		{"transient failure retries, writes nothing", origin.Resolution{}, errors.New("plc: 503"), bridgeAsserts, true, origin.OutcomeRetry, origin.ReasonTransient, nothing, false, "", 1},
		{"unresolvable DID clears", origin.Resolution{}, fmt.Errorf("plc: 404: %w", origin.ErrUnresolvable), bridgeAsserts, true, origin.OutcomeClear, origin.ReasonUnresolvable, cleared, false, "", 1},
		{"unresolvable DID drops unknown", origin.Resolution{}, fmt.Errorf("plc: 404: %w", origin.ErrUnresolvable), bridgeAsserts, false, origin.OutcomeDrop, origin.ReasonUnresolvable, nothing, false, "", 1},
		{"another DID's document clears", mod(onBridge, func(r *origin.Resolution) { r.DID = "did:plc:other" }), nil, bridgeAsserts, true,
			origin.OutcomeClear, origin.ReasonSubjectMismatch, cleared, false, "", 1},

		// Nothing to admit: no resolution.
		{"nothing asserted clears known", onBridge, nil, origin.CommunityFields{}, true, origin.OutcomeClear, origin.ReasonNotAsserted, cleared, false, "", 0},
		{"nothing asserted leaves unknown NULL", onBridge, nil, origin.CommunityFields{}, false, origin.OutcomeAdmit, origin.ReasonNotAsserted, nothing, false, "", 0},
		{"nothing valid clears known", onBridge, nil, origin.CommunityFields{Origin: "not a domain"}, true, origin.OutcomeClear, origin.ReasonNothingValid, cleared, false, "", 0},
		{"nothing valid on unknown stored as clear", onBridge, nil, origin.CommunityFields{Origin: "not a domain"}, false, origin.OutcomeAdmit, origin.ReasonNothingValid, cleared, false, "", 0},
		{"software alone is nothing valid", onBridge, nil, origin.CommunityFields{Software: "lemmy"}, true, origin.OutcomeClear, origin.ReasonNothingValid, cleared, false, "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &communityResolver{res: tc.res, err: tc.err}
			a, err := origin.NewAdmitter(r, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io"}})
			if err != nil {
				t.Fatal(err)
			}
			d := a.AdmitCommunity(context.Background(), origin.CommunityEvent{DID: did, Fields: tc.fields, Known: tc.known})
			if d.Outcome != tc.outcome || d.Reason != tc.reason || cwrite(d.Write) != tc.write {
				t.Fatalf("= %s %s %s; want %s %s %s", d.Outcome, d.Reason, cwrite(d.Write), tc.outcome, tc.reason, tc.write)
			}
			if d.Bridged != tc.bridged || d.PDS != tc.pds || r.calls != tc.calls {
				t.Fatalf("bridged %v pds %q calls %d; want %v %q %d", d.Bridged, d.PDS, r.calls, tc.bridged, tc.pds, tc.calls)
			}
			if d.Write.Username != nil {
				t.Fatal("community write touches the username column")
			}
			if (d.Outcome == origin.OutcomeRetry) != (d.Err != nil) && tc.err != nil {
				t.Fatalf("Err = %v for %s", d.Err, d.Outcome)
			}
		})
	}
}

func TestAdmitCommunityCancelledIsRetry(t *testing.T) {
	t.Parallel()
	r := &communityResolver{err: fmt.Errorf("x: %w", origin.ErrUnresolvable)}
	a, _ := origin.NewAdmitter(r, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io"}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := a.AdmitCommunity(ctx, origin.CommunityEvent{DID: "did:plc:x", Fields: origin.CommunityFields{Origin: "lemmy.world"}, Known: true})
	if d.Outcome != origin.OutcomeRetry || d.Err == nil {
		t.Fatalf("= %s %v; a cancelled caller must not clear", d.Outcome, d.Err)
	}
}

func TestAdmitCommunityLogsDIDAndReasonOnly(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	r := &communityResolver{res: origin.Resolution{DID: "did:plc:x", Handle: "c.coves.social", PDS: "https://pds.coves.social", HandleDID: "did:plc:x"}}
	a, _ := origin.NewAdmitter(r, &origin.AdmitConfig{TrustedHosts: []string{"pds.tdpl.io"}, Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	a.AdmitCommunity(context.Background(), origin.CommunityEvent{DID: "did:plc:x", Fields: origin.CommunityFields{Origin: "secret-looking.example"}, Known: true})
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "did:plc:x") || !strings.Contains(out, string(origin.ReasonOriginNotAllowed)) || strings.Contains(out, "secret-looking") {
		t.Fatalf("log = %q", out)
	}
	buf.Reset()
	r.res.Handle = "c.coves.social"
	a.AdmitCommunity(context.Background(), origin.CommunityEvent{DID: "did:plc:x", Fields: origin.CommunityFields{Origin: "coves.social"}, Known: true})
	if buf.Len() != 0 {
		t.Fatalf("admitted as asserted yet logged: %q", buf.String())
	}
}
