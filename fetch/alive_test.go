package fetch_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/fedkit/fedkit/fetch"
)

type aliveLog struct {
	mu    sync.Mutex
	hosts []string
}

func (a *aliveLog) SeenAlive(_ context.Context, host string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hosts = append(a.hosts, host)
	return nil
}

// A host that answers a fetch with a document is seen alive; one that
// answers 404 or 500 is not.
func TestFetchTellsAlive(t *testing.T) {
	t.Parallel()
	s := newSite(t, "up.test")
	s.ap("/users/a", `{"@context":"https://www.w3.org/ns/activitystreams","id":"{base}/users/a","type":"Person"}`)
	s.serve("/missing", 404, "", "")
	s.serve("/broken", 500, "", "")
	log := &aliveLog{}
	f := newFetcher(t, &fetch.Config{Alive: log})
	ctx := context.Background()
	if _, err := f.Lookup(ctx, s.url("/users/a")); err != nil {
		t.Fatal(err)
	}
	_, _ = f.Lookup(ctx, s.url("/missing"))
	_, _ = f.Lookup(ctx, s.url("/broken"))
	if !slices.Equal(log.hosts, []string{s.host}) {
		t.Fatalf("seen alive %v, want %s once", log.hosts, s.host)
	}
}
