package deliver

import (
	"container/heap"
	"sync"
)

// signTurns bounds concurrent signatures to the cores, as a semaphore whose
// waiters go in order of their host's backlog, most first (ties in arrival
// order).
//
// Why the order: a host takes its deliveries PerHost at a time, so one
// with many inboxes is a chain of rounds, each a signature's wait in this
// line plus the host's latency. Served first come, first served, chains
// drift apart by chance, and the fan-out ends with a few straggling hosts
// taking their last rounds while the cores idle (at 300 ms, 20 inboxes a
// host on 500 hosts, about a tenth of the run). Serving the longest
// backlog first keeps every host's chain moving level, the classic
// longest-remaining-work-first rule for finishing a set of chains soonest.
// A host gets at most PerHost signatures at once, so no host can starve
// the others by its backlog.
type signTurns struct {
	mu   sync.Mutex
	free int
	seq  uint64
	wait signWaiters
}

func newSignTurns(n int) *signTurns { return &signTurns{free: n} }

type signWaiter struct {
	backlog int
	seq     uint64
	ready   chan struct{}
}

// acquire waits for a signature's turn; backlog is the delivery's host's
// deliveries in flight or waiting for it.
func (s *signTurns) acquire(backlog int) {
	s.mu.Lock()
	if s.free > 0 && len(s.wait) == 0 {
		s.free--
		s.mu.Unlock()
		return
	}
	s.seq++
	w := &signWaiter{backlog: backlog, seq: s.seq, ready: make(chan struct{})}
	heap.Push(&s.wait, w)
	s.mu.Unlock()
	<-w.ready
}

// release hands the turn to the first waiter, or frees it.
func (s *signTurns) release() {
	s.mu.Lock()
	if len(s.wait) > 0 {
		w := heap.Pop(&s.wait).(*signWaiter)
		s.mu.Unlock()
		close(w.ready)
		return
	}
	s.free++
	s.mu.Unlock()
}

type signWaiters []*signWaiter

func (h signWaiters) Len() int { return len(h) }
func (h signWaiters) Less(i, j int) bool {
	if h[i].backlog != h[j].backlog {
		return h[i].backlog > h[j].backlog
	}
	return h[i].seq < h[j].seq
}
func (h signWaiters) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *signWaiters) Push(x any)   { *h = append(*h, x.(*signWaiter)) }
func (h *signWaiters) Pop() any {
	old := *h
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return w
}
