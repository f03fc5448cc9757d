package deliver

import (
	"testing"
	"time"
)

// TestSignTurnsServeLongestBacklogFirst: waiters get the turn by their
// host's backlog, most first, and in arrival order among equals.
func TestSignTurnsServeLongestBacklogFirst(t *testing.T) {
	t.Parallel()
	s := newSignTurns(1)
	s.acquire(0) // the one turn, held
	got := make(chan string, 8)
	queued := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); ; {
			s.mu.Lock()
			k := len(s.wait)
			s.mu.Unlock()
			if k == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d waiting, want %d", k, n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	for i, w := range []struct {
		name    string
		backlog int
	}{{"small", 1}, {"big", 20}, {"mid-a", 5}, {"mid-b", 5}} {
		go func() {
			s.acquire(w.backlog)
			got <- w.name
		}()
		queued(i + 1)
	}
	var order []string
	for range 4 {
		s.release()
		order = append(order, <-got)
	}
	want := []string{"big", "mid-a", "mid-b", "small"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("turns went %v, want %v", order, want)
		}
	}
	s.release()
	if s.free != 1 || len(s.wait) != 0 {
		t.Fatalf("free %d, waiting %d after every release", s.free, len(s.wait))
	}
}
