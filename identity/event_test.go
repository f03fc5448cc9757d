package identity_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/fedkit/fedkit/identity"
)

func TestDecodeIdentityEvent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		file    string // a shared Jetstream fixture, or "" to use frame
		frame   string
		want    identity.IdentityEvent
		wantErr error
	}{
		{name: "NoHandleGolden", file: "identity-no-handle.golden_v1.json", want: identity.IdentityEvent{
			DID: "did:plc:g4ut2w5755qxi3fe7mfs72p4", Seq: 30340180350, Time: time.Date(2026, 5, 25, 14, 23, 29, 950_000_000, time.UTC)}},
		{name: "WithHandle", file: "identity-with-handle.atproto-crates.json"},
		{name: "Account", file: "account-takendown.atproto-crates.json", wantErr: identity.ErrNotIdentityEvent},
		{name: "Commit", file: "commit-profile-update.golden_v1.json", wantErr: identity.ErrNotIdentityEvent},
		{name: "MismatchedDIDs", frame: `{"did":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa","kind":"identity","identity":{"did":"did:plc:bbbbbbbbbbbbbbbbbbbbbbbb","seq":1}}`, wantErr: errAny},
		{name: "NoBody", frame: `{"did":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa","kind":"identity"}`, wantErr: errAny},
		{name: "BadTime", frame: `{"kind":"identity","identity":{"did":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa","time":"yesterday"}}`, wantErr: errAny},
		{name: "NotJSON", frame: `{`, wantErr: errAny},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frame := []byte(tc.frame)
			if tc.file != "" {
				frame = fixtureFrame(t, tc.file)
			}
			ev, err := identity.DecodeIdentityEvent(frame)
			switch {
			case tc.wantErr == errAny:
				if err == nil || errors.Is(err, identity.ErrNotIdentityEvent) {
					t.Fatalf("err = %v, want a malformed-frame error", err)
				}
				return
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if tc.want.DID != "" && !(ev.DID == tc.want.DID && ev.Seq == tc.want.Seq && ev.Time.Equal(tc.want.Time) && ev.Handle == "") {
				t.Fatalf("event = %+v, want %+v", ev, tc.want)
			}
			if tc.name == "WithHandle" && ev.Handle == "" {
				t.Fatalf("handle missing: %+v", ev)
			}
		})
	}
}

var errAny = errors.New("any error")

func FuzzDecodeIdentityEvent(f *testing.F) {
	f.Add([]byte(`{"did":"did:plc:g4ut2w5755qxi3fe7mfs72p4","time_us":1779719010267528,"kind":"identity","identity":{"did":"did:plc:g4ut2w5755qxi3fe7mfs72p4","seq":30340180350,"time":"2026-05-25T14:23:29.950Z"}}`))
	f.Add([]byte(`{"kind":"identity","identity":{"did":"x","handle":"handle.invalid"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ev, err := identity.DecodeIdentityEvent(b)
		if err != nil {
			return
		}
		// Accepted only for identity frames whose DIDs agree.
		var env struct {
			DID      string `json:"did"`
			Kind     string `json:"kind"`
			Identity struct {
				DID string `json:"did"`
			} `json:"identity"`
		}
		if json.Unmarshal(b, &env) != nil || env.Kind != "identity" {
			t.Fatalf("accepted a non-identity frame %q", b)
		}
		if ev.DID != env.Identity.DID && ev.DID != env.DID {
			t.Fatalf("DID %q from neither envelope nor body", ev.DID)
		}
	})
}

func FuzzParseDocument(f *testing.F) {
	f.Add([]byte(`{"id":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa","alsoKnownAs":["at://a.test"],"service":[{"id":"#atproto_pds","type":"AtprotoPersonalDataServer","serviceEndpoint":"https://pds.test"}]}`))
	f.Add([]byte(`{"id":"did:plc:aaaaaaaaaaaaaaaaaaaaaaaa","alsoKnownAs":null,"service":[{"serviceEndpoint":{}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := identity.ParseDocument(didA, b)
		if err != nil {
			return
		}
		if id.DID != didA || id.Handle != identity.HandleInvalid {
			t.Fatalf("identity = %+v", id)
		}
		if !id.DeclaredHandle.IsZero() {
			if _, err := identity.ParseHandle(string(id.DeclaredHandle)); err != nil {
				t.Fatalf("declared handle %q does not parse", id.DeclaredHandle)
			}
		}
	})
}
