package deliver

import "sync/atomic"

// signBacklogPerCore bounds, per core, Run's claimed deliveries that are
// not waiting on the network: those on their way to their signature. Enough
// to keep every core signing while Run claims the next half; beyond it,
// claiming more only adds goroutines, memory and scheduling while the
// signers are the bottleneck.
const signBacklogPerCore = 16

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

// refill is how much room Run waits for before it claims again: half the
// line, so that a claim brings several deliveries rather than the one or
// two signed since the last. Against pgqueue each claim is a statement,
// and PostgreSQL shares the signers' cores: claiming at every freed place
// cost a fan-out about a tenth of its rate in the database's CPU.
func (g *cpuGate) refill() int { return max(1, int(g.max/2)) }

func (g *cpuGate) enter(k int) { g.n.Add(int64(k)) }

func (g *cpuGate) leave() {
	g.n.Add(-1)
	select {
	case g.room <- struct{}{}:
	default:
	}
}
