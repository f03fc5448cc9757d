package deliver

import (
	"container/list"
	"context"
	"sync"

	"github.com/fedkit/fedkit/sig"
)

func otherScheme(s sig.Scheme) sig.Scheme {
	if s == sig.SchemeRFC9421 {
		return sig.SchemeCavage
	}
	return sig.SchemeRFC9421
}

// SchemeStore remembers which signature scheme each host accepted, so the
// deliverer signs with it first next time. Implementations must be safe for
// concurrent use; one store may be shared by several Deliverers.
type SchemeStore interface {
	// Scheme returns the scheme remembered for host, and false if none is.
	Scheme(ctx context.Context, host string) (sig.Scheme, bool, error)
	// SetScheme remembers that host accepted s.
	SetScheme(ctx context.Context, host string, s sig.Scheme) error
}

// SchemeMemoryMaxDefault bounds a MemorySchemeStore's hosts by default.
const SchemeMemoryMaxDefault = 10_000

var _ SchemeStore = (*MemorySchemeStore)(nil)

// MemorySchemeStore is a SchemeStore in memory that forgets the least
// recently used host beyond its bound.
type MemorySchemeStore struct {
	max   int
	mu    sync.Mutex
	order *list.List // front: most recently used
	hosts map[string]*list.Element
}

type schemeEntry struct {
	host   string
	scheme sig.Scheme
}

// NewMemorySchemeStore returns a store keeping at most maxHosts hosts;
// maxHosts below 1 means SchemeMemoryMaxDefault.
func NewMemorySchemeStore(maxHosts int) *MemorySchemeStore {
	if maxHosts < 1 {
		maxHosts = SchemeMemoryMaxDefault
	}
	return &MemorySchemeStore{max: maxHosts, order: list.New(), hosts: map[string]*list.Element{}}
}

// Scheme implements SchemeStore.
func (m *MemorySchemeStore) Scheme(ctx context.Context, host string) (sig.Scheme, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.hosts[host]
	if e == nil {
		return 0, false, nil
	}
	m.order.MoveToFront(e)
	return e.Value.(*schemeEntry).scheme, true, nil
}

// SetScheme implements SchemeStore.
func (m *MemorySchemeStore) SetScheme(ctx context.Context, host string, s sig.Scheme) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.hosts[host]; e != nil {
		e.Value.(*schemeEntry).scheme = s
		m.order.MoveToFront(e)
		return nil
	}
	m.hosts[host] = m.order.PushFront(&schemeEntry{host: host, scheme: s})
	for m.order.Len() > m.max {
		last := m.order.Back()
		m.order.Remove(last)
		delete(m.hosts, last.Value.(*schemeEntry).host)
	}
	return nil
}

// Len returns how many hosts are remembered.
func (m *MemorySchemeStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len()
}
