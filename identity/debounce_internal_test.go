package identity

import (
	"fmt"
	"testing"
	"time"
)

func TestDebounceEviction(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := newDebounce(time.Minute, 3)
	did := func(i int) DID { return DID(fmt.Sprintf("did:web:d%d.test", i)) }
	d.record(did(1), t0)
	d.record(did(2), t0)
	d.record(did(3), t0.Add(50*time.Second))
	now := t0.Add(61 * time.Second) // 1 and 2 expired, 3 live
	d.record(did(4), now)
	// Full: every expired entry goes, not just the oldest one.
	if d.len() != 2 || !d.active(did(3), now) || !d.active(did(4), now) {
		t.Fatalf("after expired sweep: len %d", d.len())
	}
	d.record(did(5), now)
	d.record(did(6), now) // full, nothing expired: the oldest (3) goes
	if d.len() != 3 || d.active(did(3), now) || !d.active(did(4), now) || !d.active(did(6), now) {
		t.Fatalf("after oldest eviction: len %d", d.len())
	}
	// Re-recording refreshes position and expiry without growing.
	d.record(did(4), now.Add(10*time.Second))
	if d.len() != 3 {
		t.Fatalf("re-record grew to %d", d.len())
	}
	if d.active(did(5), now.Add(2*time.Minute)) || d.len() != 2 {
		t.Fatal("expired entry still active or not forgotten")
	}
}

func TestDebounceMaxDefault(t *testing.T) {
	d := newDebounce(DebounceTTLDefault, DebounceMaxEntriesDefault)
	now := time.Now()
	for i := range DebounceMaxEntriesDefault + 100 {
		d.record(DID(fmt.Sprintf("did:web:d%d.test", i)), now)
	}
	if d.len() != 4096 {
		t.Fatalf("len = %d, want 4096", d.len())
	}
}
