package deliver

import "sync/atomic"

// signBacklogPerCore bounds, per core, Run's claimed deliveries that are
// not waiting on the network: those on their way to their signature. Enough
// to keep every core signing; beyond it, claiming more only adds
// goroutines, memory and scheduling while the signers are the bottleneck.
const signBacklogPerCore = 8

// cpuGate counts Run's claimed deliveries that have not yet been signed and
// are not waiting for their host: the work ahead of the signers. Run claims
// only while it is below max, so a fan-out to inboxes that answer at once
// keeps a short line at the signers, while one to slow inboxes fills
// Concurrency with deliveries waiting on the network.
type cpuGate struct {
	n    atomic.Int64
	max  int64
	room chan struct{} // a token when n may have dropped below max
}

func newCPUGate(max int) *cpuGate {
	return &cpuGate{max: int64(max), room: make(chan struct{}, 1)}
}

// free returns how many more deliveries may enter.
func (g *cpuGate) free() int { return int(g.max - g.n.Load()) }

func (g *cpuGate) enter(k int) { g.n.Add(int64(k)) }

func (g *cpuGate) leave() {
	g.n.Add(-1)
	select {
	case g.room <- struct{}{}:
	default:
	}
}
