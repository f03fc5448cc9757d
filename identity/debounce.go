package identity

import (
	"container/list"
	"sync"
	"time"
)

// Defaults for the timeout debounce.
const (
	DebounceTTLDefault        = 90 * time.Second // IDENTITY_NEGATIVE_CACHE_TTL
	DebounceMaxEntriesDefault = 4096
)

// expiring is a bounded per-DID memory with one TTL: the Refresher's timeout
// debounce and the Cache's negative entries. When full it drops every
// expired entry, or the oldest when none has expired. Insertion order is
// kept in a list so eviction of the oldest is O(1).
type expiring[V any] struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int
	order *list.List // of expiringEntry[V], oldest first
	byDID map[DID]*list.Element
}

type expiringEntry[V any] struct {
	did     DID
	expires time.Time
	val     V
}

func newExpiring[V any](ttl time.Duration, max int) *expiring[V] {
	return &expiring[V]{ttl: ttl, max: max, order: list.New(), byDID: make(map[DID]*list.Element)}
}

// put remembers v for did from now until now+ttl.
func (d *expiring[V]) put(did DID, now time.Time, v V) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if el, ok := d.byDID[did]; ok {
		d.order.Remove(el)
		delete(d.byDID, did)
	}
	if len(d.byDID) >= d.max {
		d.evictLocked(now)
	}
	d.byDID[did] = d.order.PushBack(expiringEntry[V]{did: did, expires: now.Add(d.ttl), val: v})
}

// evictLocked drops every expired entry; if none was expired it drops the
// oldest one. Entries are recorded with one TTL in clock order, so the list
// is in expiry order and the expired ones are all at the front.
func (d *expiring[V]) evictLocked(now time.Time) {
	removed := false
	for el := d.order.Front(); el != nil; el = d.order.Front() {
		e := el.Value.(expiringEntry[V])
		if now.Before(e.expires) {
			break
		}
		d.order.Remove(el)
		delete(d.byDID, e.did)
		removed = true
	}
	if !removed {
		if el := d.order.Front(); el != nil {
			d.order.Remove(el)
			delete(d.byDID, el.Value.(expiringEntry[V]).did)
		}
	}
}

// get returns did's live value at now, forgetting it if expired.
func (d *expiring[V]) get(did DID, now time.Time) (V, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var zero V
	el, ok := d.byDID[did]
	if !ok {
		return zero, false
	}
	if e := el.Value.(expiringEntry[V]); now.Before(e.expires) {
		return e.val, true
	}
	d.order.Remove(el)
	delete(d.byDID, did)
	return zero, false
}

// remove forgets did.
func (d *expiring[V]) remove(did DID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if el, ok := d.byDID[did]; ok {
		d.order.Remove(el)
		delete(d.byDID, did)
	}
}

// clear forgets everything.
func (d *expiring[V]) clear() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.order.Init()
	clear(d.byDID)
}

func (d *expiring[V]) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.byDID)
}

// debounce remembers DIDs whose resolution hit its deadline.
type debounce struct{ *expiring[struct{}] }

func newDebounce(ttl time.Duration, max int) *debounce {
	return &debounce{newExpiring[struct{}](ttl, max)}
}

// record notes that did's resolution hit its deadline at now.
func (d *debounce) record(did DID, now time.Time) { d.put(did, now, struct{}{}) }

// active reports whether did is debounced at now, forgetting it if expired.
func (d *debounce) active(did DID, now time.Time) bool {
	_, ok := d.get(did, now)
	return ok
}
