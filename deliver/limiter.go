package deliver

import (
	"context"
	"sync"
)

// PerHostDefault is the default number of deliveries in flight to one host.
const PerHostDefault = 2

// HostLimiter bounds how many deliveries are in flight to each remote host.
// One HostLimiter may be shared by several Deliverers (Config.HostLimiter),
// for example every tenant's in one process. It keeps state only for hosts
// with deliveries in flight or waiting.
type HostLimiter struct {
	n     int
	mu    sync.Mutex
	hosts map[string]*hostSlot
}

type hostSlot struct {
	sem  chan struct{}
	refs int
}

// NewHostLimiter returns a limiter allowing perHost deliveries in flight to
// each host; perHost below 1 means PerHostDefault.
func NewHostLimiter(perHost int) *HostLimiter {
	if perHost < 1 {
		perHost = PerHostDefault
	}
	return &HostLimiter{n: perHost, hosts: map[string]*hostSlot{}}
}

// Acquire waits for a slot for host and returns the function that frees it.
func (l *HostLimiter) Acquire(ctx context.Context, host string) (release func(), err error) {
	s := l.ref(host)
	select {
	case s.sem <- struct{}{}:
		return l.releaser(host, s), nil
	case <-ctx.Done():
		l.unref(host, s)
		return nil, ctx.Err()
	}
}

// TryAcquire takes a slot for host if one is free at once.
func (l *HostLimiter) TryAcquire(host string) (release func(), ok bool) {
	s := l.ref(host)
	select {
	case s.sem <- struct{}{}:
		return l.releaser(host, s), true
	default:
		l.unref(host, s)
		return nil, false
	}
}

// ref returns host's slots, counting one more user of them.
func (l *HostLimiter) ref(host string) *hostSlot {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.hosts[host]
	if s == nil {
		s = &hostSlot{sem: make(chan struct{}, l.n)}
		l.hosts[host] = s
	}
	s.refs++
	return s
}

// releaser frees a slot taken in s, once however often it is called.
func (l *HostLimiter) releaser(host string, s *hostSlot) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			<-s.sem
			l.unref(host, s)
		})
	}
}

func (l *HostLimiter) unref(host string, s *hostSlot) {
	l.mu.Lock()
	s.refs--
	if s.refs == 0 {
		delete(l.hosts, host)
	}
	l.mu.Unlock()
}

// InFlight returns how many deliveries to host hold a slot.
func (l *HostLimiter) InFlight(host string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s := l.hosts[host]; s != nil {
		return len(s.sem)
	}
	return 0
}
