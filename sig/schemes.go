package sig

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

// Scheme is an HTTP signature scheme.
type Scheme uint8

const (
	// SchemeCavage is draft-cavage-http-signatures-12, as Mastodon signs.
	SchemeCavage Scheme = iota + 1
	// SchemeRFC9421 is RFC 9421 HTTP Message Signatures.
	SchemeRFC9421
)

// String returns "cavage", "rfc9421" or "unknown".
func (s Scheme) String() string {
	switch s {
	case SchemeCavage:
		return "cavage"
	case SchemeRFC9421:
		return "rfc9421"
	}
	return "unknown"
}

// MarshalText implements encoding.TextMarshaler.
func (s Scheme) MarshalText() ([]byte, error) {
	if s != SchemeCavage && s != SchemeRFC9421 {
		return nil, fmt.Errorf("sig: unknown scheme %d", s)
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *Scheme) UnmarshalText(b []byte) error {
	switch string(b) {
	case "cavage":
		*s = SchemeCavage
	case "rfc9421":
		*s = SchemeRFC9421
	default:
		return fmt.Errorf("sig: unknown scheme %q", b)
	}
	return nil
}

// SchemeStore remembers which signature scheme each host accepted, so a
// sender (deliver's Deliverer, fetch's signed GETs) signs with it first next
// time. Implementations must be safe for concurrent use; one store may serve
// several senders. sigtest.TestSchemeStore is the conformance suite every
// implementation passes.
type SchemeStore interface {
	// Scheme returns the scheme remembered for host, and false if none is.
	Scheme(ctx context.Context, host string) (Scheme, bool, error)
	// SetScheme remembers that host accepted s.
	SetScheme(ctx context.Context, host string, s Scheme) error
}

// HostSchemesMaxDefault bounds a HostSchemes' hosts by default.
const HostSchemesMaxDefault = 10_000

var _ SchemeStore = (*HostSchemes)(nil)

// HostSchemes is a SchemeStore in memory that forgets the least recently
// used host beyond its bound. It is the default store of deliver and fetch,
// and one store may serve both.
type HostSchemes struct {
	max   int
	mu    sync.Mutex
	order *list.List // front: most recently used
	hosts map[string]*list.Element
}

type schemeEntry struct {
	host    string
	scheme  Scheme
	learned time.Time // zero: told through SetScheme, which has no time
}

// NewHostSchemes returns a store keeping at most maxHosts hosts; maxHosts
// below 1 means HostSchemesMaxDefault.
func NewHostSchemes(maxHosts int) *HostSchemes {
	if maxHosts < 1 {
		maxHosts = HostSchemesMaxDefault
	}
	return &HostSchemes{max: maxHosts, order: list.New(), hosts: map[string]*list.Element{}}
}

// Scheme implements SchemeStore. A hit makes host the most recently used.
func (m *HostSchemes) Scheme(_ context.Context, host string) (Scheme, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.hosts[host]
	if e == nil {
		return 0, false, nil
	}
	m.order.MoveToFront(e)
	return e.Value.(*schemeEntry).scheme, true, nil
}

// SetScheme implements SchemeStore, evicting the least recently used hosts
// beyond the bound. The time learned is kept when s is what was
// remembered, and unknown (zero) when it changes.
func (m *HostSchemes) SetScheme(_ context.Context, host string, s Scheme) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.set(host, s, time.Time{}, false)
	return nil
}

// set remembers s for host; with dated, learned is the time learned, else
// the time is kept when s does not change. The caller holds m.mu.
func (m *HostSchemes) set(host string, s Scheme, learned time.Time, dated bool) {
	if e := m.hosts[host]; e != nil {
		se := e.Value.(*schemeEntry)
		if dated || se.scheme != s {
			se.learned = learned
		}
		se.scheme = s
		m.order.MoveToFront(e)
		return
	}
	m.hosts[host] = m.order.PushFront(&schemeEntry{host: host, scheme: s, learned: learned})
	for m.order.Len() > m.max {
		last := m.order.Back()
		m.order.Remove(last)
		delete(m.hosts, last.Value.(*schemeEntry).host)
	}
}

// Len returns how many hosts are remembered.
func (m *HostSchemes) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len()
}
