package deliver

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
)

// Availability defaults.
const (
	// AvailabilityDaysDefault is how many distinct days a host must fail
	// on, with no success in between, to become unavailable: Mastodon's
	// delivery failure tracker's threshold. A week outlasts a weekend's
	// outage and a migration, so only a host that is gone gets there.
	AvailabilityDaysDefault = 7
	// AvailabilityMaxHostsDefault bounds a MemoryAvailabilityStore.
	AvailabilityMaxHostsDefault = 100_000
)

// AvailabilityConfig configures the availability rule of a Deliverer.
type AvailabilityConfig struct {
	// Store remembers failures. Defaults to a MemoryAvailabilityStore of
	// AvailabilityMaxHostsDefault hosts; give a shared store to several
	// processes sharing a queue.
	Store driver.AvailabilityStore
	// Days is the rule's threshold. Defaults to AvailabilityDaysDefault.
	Days int
	// OnSkipped sees each delivery skipped because its host is
	// unavailable, before it is settled as skipped. Defaults to nil.
	OnSkipped func(ctx context.Context, s UnavailableSkip)
}

// UnavailableSkip describes a delivery skipped because its host is
// unavailable, for AvailabilityConfig.OnSkipped.
type UnavailableSkip struct {
	// Inbox is the destination and Host its host.
	Inbox, Host string
	// ActivityID and Tag are the activity's "id" and the batch's tag.
	ActivityID, Tag string
	// Since is when the host became unavailable.
	Since time.Time
}

// SeenAlive tells the Deliverer that host (host[:port], as in an inbox URL)
// is alive: the application calls it from its inbox for every activity
// that arrives from host (a verified one), so that a host marked
// unavailable gets deliveries again. fetch.Config.Alive takes the store
// itself, for hosts seen alive by a fetch.
func (d *Deliverer) SeenAlive(ctx context.Context, host string) error {
	if d.cfg.DisableAvailability {
		return nil
	}
	return d.cfg.Availability.Store.SeenAlive(ctx, host)
}

// skipUnavailable settles j as skipped when its host is unavailable, and
// reports whether it did. A store that cannot answer does not stop
// delivery.
func (d *Deliverer) skipUnavailable(ctx context.Context, j *driver.Job, host string) bool {
	if d.cfg.DisableAvailability {
		return false
	}
	a := &d.cfg.Availability
	since, down, err := a.Store.Unavailable(ctx, host)
	if d.availabilityLog.note(err, "deliver: availability store failed; sending anyway", "host", host) || !down {
		return false
	}
	if a.OnSkipped != nil {
		a.OnSkipped(ctx, UnavailableSkip{Inbox: j.Inbox, Host: host, ActivityID: j.Envelope.ActivityID,
			Tag: j.Envelope.Tag, Since: since})
	}
	d.settle(ctx, j, host, driver.ResultSkipped, j.Attempts, ErrUnavailable)
	return true
}

// observeAvailability records an attempt's outcome: a delivery the host
// accepted is its sign of life; a failure to reach it (no answer, a
// timeout, a 5xx, 408 or 429) is a failure of the day. A refusal (another
// 4xx) says the host is up but says nothing else, and changes nothing.
func (d *Deliverer) observeAvailability(ctx context.Context, host string, delivered, reachable bool) {
	if d.cfg.DisableAvailability {
		return
	}
	a := &d.cfg.Availability
	const failed = "deliver: availability store failed"
	switch {
	case delivered:
		d.availabilityLog.note(a.Store.SeenAlive(ctx, host), failed, "host", host)
	case !reachable:
		since, down, err := a.Store.Failure(ctx, host, d.cfg.Now(), driver.AvailabilityRule{Days: a.Days})
		if !d.availabilityLog.note(err, failed, "host", host) && down {
			d.log.Info("deliver: host unavailable", "host", host, "since", since)
		}
	}
}

// fillAvailability applies the defaults.
func fillAvailability(a *AvailabilityConfig) {
	if a.Store == nil {
		a.Store = NewMemoryAvailabilityStore(0)
	}
	if a.Days <= 0 {
		a.Days = AvailabilityDaysDefault
	}
}

// dayOf numbers t's UTC day.
func dayOf(t time.Time) int64 {
	return t.Unix() / 86400
}

var _ driver.AvailabilityStore = (*MemoryAvailabilityStore)(nil)

// MemoryAvailabilityStore is an AvailabilityStore in memory, for one
// process. It keeps at most its bound of failing hosts: past it, a new
// failing host displaces one that is still available (or, when all are
// unavailable, any), so memory stays bounded whatever the network does.
// Checking a host costs one map read under a read lock.
type MemoryAvailabilityStore struct {
	max   int
	mu    sync.RWMutex
	hosts map[string]*availEntry
}

type availEntry struct {
	days  []int64 // distinct failure days since the last success, at most the rule's Days
	since time.Time
}

// NewMemoryAvailabilityStore keeps at most maxHosts failing hosts; below 1
// means AvailabilityMaxHostsDefault.
func NewMemoryAvailabilityStore(maxHosts int) *MemoryAvailabilityStore {
	if maxHosts < 1 {
		maxHosts = AvailabilityMaxHostsDefault
	}
	return &MemoryAvailabilityStore{max: maxHosts, hosts: map[string]*availEntry{}}
}

// Failure implements AvailabilityStore.
func (m *MemoryAvailabilityStore) Failure(_ context.Context, host string, now time.Time, rule driver.AvailabilityRule) (time.Time, bool, error) {
	days := max(rule.Days, 1)
	day := dayOf(now)
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.hosts[host]
	if e == nil {
		if len(m.hosts) >= m.max {
			m.evictLocked()
		}
		e = &availEntry{}
		m.hosts[host] = e
	}
	if !slices.Contains(e.days, day) {
		e.days = append(e.days, day)
		if len(e.days) > days {
			e.days = slices.Delete(e.days, 0, len(e.days)-days)
		}
	}
	if e.since.IsZero() && len(e.days) >= days {
		e.since = now
	}
	return e.since, !e.since.IsZero(), nil
}

// evictLocked drops one host, preferring one still available.
func (m *MemoryAvailabilityStore) evictLocked() {
	victim, found := "", false
	for h, e := range m.hosts {
		if e.since.IsZero() {
			delete(m.hosts, h)
			return
		}
		if !found {
			victim, found = h, true
		}
	}
	if found {
		delete(m.hosts, victim)
	}
}

// SeenAlive implements AvailabilityStore.
func (m *MemoryAvailabilityStore) SeenAlive(_ context.Context, host string) error {
	m.mu.RLock()
	_, ok := m.hosts[host]
	m.mu.RUnlock()
	if !ok {
		// The common case, a healthy host's delivery: no write lock.
		return nil
	}
	m.mu.Lock()
	delete(m.hosts, host)
	m.mu.Unlock()
	return nil
}

// Unavailable implements AvailabilityStore.
func (m *MemoryAvailabilityStore) Unavailable(_ context.Context, host string) (time.Time, bool, error) {
	m.mu.RLock()
	e := m.hosts[host]
	var since time.Time
	if e != nil {
		since = e.since
	}
	m.mu.RUnlock()
	return since, !since.IsZero(), nil
}

// ListUnavailable implements AvailabilityStore.
func (m *MemoryAvailabilityStore) ListUnavailable(context.Context) ([]driver.UnavailableHost, error) {
	m.mu.RLock()
	var out []driver.UnavailableHost
	for h, e := range m.hosts {
		if !e.since.IsZero() {
			out = append(out, driver.UnavailableHost{Host: h, Since: e.since})
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b driver.UnavailableHost) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		return compareStrings(a.Host, b.Host)
	})
	return out, nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Len returns how many hosts are remembered as failing.
func (m *MemoryAvailabilityStore) Len() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.hosts)
}
