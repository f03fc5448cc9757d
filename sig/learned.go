package sig

import (
	"context"
	"time"
)

// LearnedScheme is what a sender learned of a host's signatures: the
// scheme it accepted, and when that was last established.
type LearnedScheme struct {
	// Scheme is the scheme the host accepted.
	Scheme Scheme
	// Learned is when the host last accepted Scheme, or was last tried
	// with the other one and refused it. Zero when the store was told
	// through SetScheme, which carries no time.
	Learned time.Time
}

// LearnedSchemeStore is a SchemeStore that keeps when it learned each
// host's scheme, so that a sender can try RFC 9421 again on a host
// remembered as draft-cavage once that is old (deliver's re-probe), and can
// keep what it learned across restarts. HostSchemes keeps it in memory;
// sig/redisschemes and sig/pgschemes persist it, and
// sigtest.TestLearnedSchemeStore is the conformance suite every
// implementation passes. It is declared here, beside SchemeStore, though
// deliver is its main consumer: deliver and fetch both take a SchemeStore
// of this package's.
type LearnedSchemeStore interface {
	SchemeStore
	// Learned returns what is remembered of host, and false if nothing is.
	Learned(ctx context.Context, host string) (LearnedScheme, bool, error)
	// Learn remembers l for host, replacing what was remembered.
	Learn(ctx context.Context, host string, l LearnedScheme) error
}

var _ LearnedSchemeStore = (*HostSchemes)(nil)

// Learned implements LearnedSchemeStore. A hit makes host the most
// recently used.
func (m *HostSchemes) Learned(_ context.Context, host string) (LearnedScheme, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.hosts[host]
	if e == nil {
		return LearnedScheme{}, false, nil
	}
	m.order.MoveToFront(e)
	se := e.Value.(*schemeEntry)
	return LearnedScheme{Scheme: se.scheme, Learned: se.learned}, true, nil
}

// Learn implements LearnedSchemeStore, evicting the least recently used
// hosts beyond the bound.
func (m *HostSchemes) Learn(_ context.Context, host string, l LearnedScheme) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.set(host, l.Scheme, l.Learned, true)
	return nil
}
