package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fedkit/fedkit/examples/relay/internal/store"
	"github.com/fedkit/fedkit/examples/relay/internal/store/storetest"
)

func TestFileStore(t *testing.T) {
	storetest.TestStore(t, func(t *testing.T) store.Store {
		s, err := store.OpenFile(filepath.Join(t.TempDir(), "subscribers.json"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestFileStoreSurvivesReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "subscribers.json")
	s, err := store.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sub := store.Subscriber{Actor: "https://a.example/actor", Inbox: "https://a.example/inbox", Host: "a.example",
		Style: store.StyleLitePub, State: store.StateActive, Since: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	if err := s.Put(ctx, sub); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v, %v; want 0600", fi.Mode(), err)
	}
	s2, err := store.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := s2.Get(ctx, sub.Actor); !ok || got != sub {
		t.Fatalf("after reopen: %+v, %v; want %+v", got, ok, sub)
	}
	if _, err := s2.Delete(ctx, sub.Actor); err != nil {
		t.Fatal(err)
	}
	s3, _ := store.OpenFile(path)
	if list, _ := s3.List(ctx); len(list) != 0 {
		t.Fatalf("delete not persisted: %+v", list)
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
}

func TestOpenFileRefuses(t *testing.T) {
	for name, content := range map[string]string{
		"not json":        "{",
		"unknown version": `{"version": 9, "subscribers": []}`,
		"invalid entry":   `{"version": 1, "subscribers": [{"actor": "https://a.example/actor", "inbox": "", "style": "mastodon", "state": "active"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.json")
			if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := store.OpenFile(p); err == nil {
				t.Fatal("OpenFile accepted it")
			}
		})
	}
}

func TestWriteFileAtomicFailsCleanly(t *testing.T) {
	dir := t.TempDir()
	// The target is a directory, so the rename fails; nothing must be left.
	target := filepath.Join(dir, "taken")
	if err := os.MkdirAll(filepath.Join(target, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := store.WriteFileAtomic(target, []byte("x"), 0o600); err == nil {
		t.Fatal("WriteFileAtomic over a non-empty directory succeeded")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".taken.tmp-*")); len(m) != 0 {
		t.Fatalf("temporary file left behind: %v", m)
	}
}

func FuzzOpenFile(f *testing.F) {
	f.Add([]byte(`{"version":1,"subscribers":[{"actor":"https://a.example/actor","inbox":"https://a.example/inbox","host":"a.example","style":"mastodon","follow_id":"","state":"active","since":"2026-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"version":1,"subscribers":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "s.json")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := store.OpenFile(p)
		if err != nil {
			return
		}
		list, _ := s.List(context.Background())
		for _, sub := range list {
			if err := sub.Validate(); err != nil {
				t.Fatalf("loaded an invalid subscriber: %v", err)
			}
		}
		// Whatever loads survives a rewrite and a reload unchanged.
		if len(list) > 0 {
			if err := s.Put(context.Background(), list[0]); err != nil {
				t.Fatal(err)
			}
			s2, err := store.OpenFile(p)
			if err != nil {
				t.Fatalf("rewritten file does not load: %v", err)
			}
			l2, _ := s2.List(context.Background())
			a, _ := json.Marshal(list)
			b, _ := json.Marshal(l2)
			if string(a) != string(b) {
				t.Fatalf("round trip changed the list:\n%s\n%s", a, b)
			}
		}
	})
}

func ExampleOpenFile() {
	dir, _ := os.MkdirTemp("", "relay")
	defer os.RemoveAll(dir)
	s, err := store.OpenFile(filepath.Join(dir, "subscribers.json"))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_ = s.Put(ctx, store.Subscriber{Actor: "https://social.example/actor", Inbox: "https://social.example/inbox",
		Host: "social.example", Style: store.StyleMastodon, State: store.StateActive})
	again, _ := store.OpenFile(s.Path()) // as after a restart
	subs, _ := again.List(ctx)
	fmt.Println(len(subs), subs[0].Actor)
	// Output: 1 https://social.example/actor
}
