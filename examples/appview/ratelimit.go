package main

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/fedkit/fedkit/identity"
)

// limitedResolver spaces the sweep's resolutions per host, so a large
// sweep cannot hammer the PLC directory or a did:web host. did:plc DIDs
// share one key (they all hit the PLC directory).
type limitedResolver struct {
	inner    identity.Resolver
	interval time.Duration

	mu   sync.Mutex
	next map[string]time.Time
}

var _ identity.Resolver = (*limitedResolver)(nil)

func newLimitedResolver(inner identity.Resolver, perSecond float64) identity.Resolver {
	if perSecond <= 0 {
		return inner
	}
	return &limitedResolver{inner: inner, interval: time.Duration(float64(time.Second) / perSecond), next: map[string]time.Time{}}
}

func hostKey(did identity.DID) string {
	if h, ok := strings.CutPrefix(string(did), "did:web:"); ok {
		return h
	}
	return "plc"
}

// wait reserves the next slot for key and sleeps until it.
func (l *limitedResolver) wait(ctx context.Context, key string) error {
	l.mu.Lock()
	now := time.Now()
	at := l.next[key]
	if at.Before(now) {
		at = now
	}
	l.next[key] = at.Add(l.interval)
	l.mu.Unlock()
	d := time.Until(at)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (l *limitedResolver) LookupDID(ctx context.Context, did identity.DID) (*identity.Identity, error) {
	if err := l.wait(ctx, hostKey(did)); err != nil {
		return nil, err
	}
	return l.inner.LookupDID(ctx, did)
}

func (l *limitedResolver) ResolveHandle(ctx context.Context, h identity.Handle) (identity.DID, error) {
	if err := l.wait(ctx, "handle:"+string(h)); err != nil {
		return "", err
	}
	return l.inner.ResolveHandle(ctx, h)
}
