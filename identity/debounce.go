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

// debounce remembers DIDs whose resolution hit its deadline. Insertion order
// is kept in a list so eviction of the oldest is O(1).
type debounce struct {
	mu    sync.Mutex
	ttl   time.Duration
	max   int
	order *list.List // of debounceEntry, oldest first
	byDID map[DID]*list.Element
}

type debounceEntry struct {
	did     DID
	expires time.Time
}

func newDebounce(ttl time.Duration, max int) *debounce {
	return &debounce{ttl: ttl, max: max, order: list.New(), byDID: make(map[DID]*list.Element)}
}

// record notes that did's resolution hit its deadline at now.
func (d *debounce) record(did DID, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if el, ok := d.byDID[did]; ok {
		d.order.Remove(el)
		delete(d.byDID, did)
	}
	if len(d.byDID) >= d.max {
		d.evictLocked(now)
	}
	d.byDID[did] = d.order.PushBack(debounceEntry{did: did, expires: now.Add(d.ttl)})
}

// evictLocked drops every expired entry; if none was expired it drops the
// oldest one. Entries are recorded with one TTL in clock order, so the list
// is in expiry order and the expired ones are all at the front.
func (d *debounce) evictLocked(now time.Time) {
	removed := false
	for el := d.order.Front(); el != nil; el = d.order.Front() {
		e := el.Value.(debounceEntry)
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
			delete(d.byDID, el.Value.(debounceEntry).did)
		}
	}
}

// active reports whether did is debounced at now, forgetting it if expired.
func (d *debounce) active(did DID, now time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	el, ok := d.byDID[did]
	if !ok {
		return false
	}
	if now.Before(el.Value.(debounceEntry).expires) {
		return true
	}
	d.order.Remove(el)
	delete(d.byDID, did)
	return false
}

func (d *debounce) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.byDID)
}
