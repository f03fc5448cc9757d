package fetch

import (
	"container/list"
	"context"
	"sync"

	"github.com/fedkit/fedkit/sig"
)

// SchemeStore remembers which signature scheme each host accepted. It has
// the method set of deliver.SchemeStore, so one store can serve both.
type SchemeStore interface {
	// Scheme returns the scheme remembered for host, and false if none is.
	Scheme(ctx context.Context, host string) (sig.Scheme, bool, error)
	// SetScheme remembers that host accepted s.
	SetScheme(ctx context.Context, host string, s sig.Scheme) error
}

// SchemeMemoryMaxDefault bounds a MemorySchemeStore by default.
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

// NewMemorySchemeStore keeps at most maxHosts hosts; below 1 means
// SchemeMemoryMaxDefault.
func NewMemorySchemeStore(maxHosts int) *MemorySchemeStore {
	if maxHosts < 1 {
		maxHosts = SchemeMemoryMaxDefault
	}
	return &MemorySchemeStore{max: maxHosts, order: list.New(), hosts: map[string]*list.Element{}}
}

// Scheme implements SchemeStore.
func (m *MemorySchemeStore) Scheme(_ context.Context, host string) (sig.Scheme, bool, error) {
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
func (m *MemorySchemeStore) SetScheme(_ context.Context, host string, s sig.Scheme) error {
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
