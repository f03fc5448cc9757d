package jetstream

import (
	"bufio"
	"bytes"
	"errors"
	"testing"

	"github.com/fedkit/fedkit/internal/fixture"
)

func TestParseSharedFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file  string
		kind  string
		check func(t *testing.T, f Frame)
	}{
		{"identity-no-handle.golden_v1.json", KindIdentity, func(t *testing.T, f Frame) {
			if f.Identity.Handle != "" || f.Identity.Seq != 30340180350 {
				t.Errorf("identity = %+v", f.Identity)
			}
		}},
		{"identity-with-handle.atproto-crates.json", KindIdentity, func(t *testing.T, f Frame) {
			if f.Identity.Handle == "" {
				t.Error("handle lost")
			}
		}},
		{"account-takendown.atproto-crates.json", KindAccount, func(t *testing.T, f Frame) {
			if f.Account.Active || f.Account.Status != "takendown" {
				t.Errorf("account = %+v", f.Account)
			}
		}},
		{"account-active.golden_v1.json", KindAccount, func(t *testing.T, f Frame) {
			if !f.Account.Active || f.Account.Status != "" {
				t.Errorf("account = %+v", f.Account)
			}
		}},
		{"commit-profile-update.golden_v1.json", KindCommit, func(t *testing.T, f Frame) {
			c := f.Commit
			if c.Operation != OpUpdate || c.Collection != "app.bsky.actor.profile" || c.RKey != "self" || len(c.Record) == 0 || c.CID == "" {
				t.Errorf("commit = %+v", c)
			}
		}},
		{"commit-delete.golden_v1.json", KindCommit, func(t *testing.T, f Frame) {
			if f.Commit.Operation != OpDelete || len(f.Commit.Record) != 0 {
				t.Errorf("commit = %+v", f.Commit)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b := bytes.TrimSpace(fixture.Shared(t, "jetstream/"+tt.file))
			f, err := Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			if f.Kind != tt.kind || f.DID == "" || f.TimeUS <= 0 || !bytes.Equal(f.Raw, b) {
				t.Fatalf("frame = %+v", f)
			}
			tt.check(t, f)
		})
	}
}

func TestParseAllFrames(t *testing.T) {
	t.Parallel()
	sc := bufio.NewScanner(bytes.NewReader(fixture.Shared(t, "jetstream/all-frames.jsonl")))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		if _, err := Parse(sc.Bytes()); err != nil {
			t.Errorf("line %d: %v", n+1, err)
		}
		n++
	}
	if n != 10 {
		t.Fatalf("read %d frames, want 10", n)
	}
}

func TestParseInvalid(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"not json":              `{`,
		"no did":                `{"time_us":1,"kind":"identity","identity":{"seq":1}}`,
		"no time_us":            `{"did":"did:plc:a","kind":"identity","identity":{"seq":1}}`,
		"identity without body": `{"did":"did:plc:a","time_us":1,"kind":"identity"}`,
		"identity other DID":    `{"did":"did:plc:a","time_us":1,"kind":"identity","identity":{"did":"did:plc:b","seq":1}}`,
		"account without body":  `{"did":"did:plc:a","time_us":1,"kind":"account"}`,
		"account other DID":     `{"did":"did:plc:a","time_us":1,"kind":"account","account":{"did":"did:plc:b","active":true}}`,
		"commit without body":   `{"did":"did:plc:a","time_us":1,"kind":"commit"}`,
		"create without record": `{"did":"did:plc:a","time_us":1,"kind":"commit","commit":{"rev":"r","operation":"create","collection":"c.d","rkey":"k"}}`,
		"null record":           `{"did":"did:plc:a","time_us":1,"kind":"commit","commit":{"rev":"r","operation":"update","collection":"c.d","rkey":"k","record":null}}`,
		"bad operation":         `{"did":"did:plc:a","time_us":1,"kind":"commit","commit":{"rev":"r","operation":"merge","collection":"c.d","rkey":"k"}}`,
		"no rkey":               `{"did":"did:plc:a","time_us":1,"kind":"commit","commit":{"rev":"r","operation":"delete","collection":"c.d"}}`,
		// What PostgreSQL would refuse in every query about the event (and
		// in its redrive row), stalling the lane on it, or no DID at all.
		"NUL in did":          `{"did":"did:plc:a\u0000","time_us":1,"kind":"identity","identity":{"seq":1}}`,
		"did not a DID":       `{"did":"alice.example","time_us":1,"kind":"identity","identity":{"seq":1}}`,
		"did with a space":    `{"did":"did:plc:a b","time_us":1,"kind":"identity","identity":{"seq":1}}`,
		"NUL in rkey":         `{"did":"did:plc:a","time_us":1,"kind":"commit","commit":{"rev":"r","operation":"delete","collection":"c.d","rkey":"k\u0000"}}`,
		"NUL in rev":          `{"did":"did:plc:a","time_us":1,"kind":"commit","commit":{"rev":"r\u0000","operation":"delete","collection":"c.d","rkey":"k"}}`,
		"slash in collection": `{"did":"did:plc:a","time_us":1,"kind":"commit","commit":{"rev":"r","operation":"delete","collection":"c.d/../e","rkey":"k"}}`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse([]byte(in)); !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

func TestParseKeepsTimeOnMalformed(t *testing.T) {
	t.Parallel()
	// The consumer needs time_us of a malformed frame to move the cursor past it.
	f, err := Parse([]byte(`{"did":"did:plc:a","time_us":42,"kind":"identity"}`))
	if err == nil || f.TimeUS != 42 {
		t.Fatalf("f.TimeUS = %d, err = %v", f.TimeUS, err)
	}
}

func TestParseUnknownKind(t *testing.T) {
	t.Parallel()
	f, err := Parse([]byte(`{"did":"did:plc:a","time_us":7,"kind":"sync","sync":{}}`))
	if err != nil || f.Kind != "sync" {
		t.Fatalf("f = %+v, err = %v", f, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"did":"did:plc:aaaa","time_us":1700000000000001,"kind":"identity","identity":{"did":"did:plc:aaaa","seq":5,"time":"2026-01-01T00:00:00.000Z"}}`))
	f.Add([]byte(`{"did":"did:plc:aaaa","time_us":1700000000000002,"kind":"commit","commit":{"rev":"3l","operation":"create","collection":"app.bsky.actor.profile","rkey":"self","record":{"displayName":"x"},"cid":"bafy"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("unwrapped error %v", err)
			}
			return
		}
		// An accepted frame has what the consumer relies on.
		if fr.DID == "" || fr.TimeUS <= 0 || !bytes.Equal(fr.Raw, b) {
			t.Fatalf("accepted %+v", fr)
		}
		switch fr.Kind {
		case KindIdentity:
			if fr.Identity == nil {
				t.Fatal("identity without body")
			}
		case KindAccount:
			if fr.Account == nil {
				t.Fatal("account without body")
			}
		case KindCommit:
			if fr.Commit == nil {
				t.Fatal("commit without body")
			}
		}
	})
}
