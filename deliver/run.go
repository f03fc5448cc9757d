package deliver

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/fedkit/fedkit/deliver/driver"
)

// Run works the queue until ctx ends, then lets the deliveries in flight
// finish, for at most ShutdownGrace, before it returns; deliveries claimed
// but not yet started go back to the queue. A delivery still in flight when
// the grace period ends is cut off and goes back to the queue due at once,
// with no attempt counted and no breaker failure recorded: a shutdown is
// not the remote's fault (the remote may have received it, so a delivery
// is at least once). It returns nil after a shutdown and an error only when
// it could not start.
func (d *Deliverer) Run(ctx context.Context) error {
	// Sends in flight outlive ctx by the grace period.
	work, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	defer d.startGauges()()
	slots := make(chan struct{}, d.cfg.Concurrency)
	waiters := make(chan struct{}, waitersPerSlot*d.cfg.Concurrency)
	gate := newCPUGate(signBacklogPerCore * runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	out := &outage{log: d.log, poll: d.cfg.PollInterval}
	if n, ok := d.queue.(driver.Notifier); ok {
		notified := make(chan struct{})
		defer func() { <-notified }() // after ctx ends, so Notify has returned
		go func() {
			defer close(notified)
			err := n.Notify(ctx, d.cfg.Now, func() {
				if out.down.Load() {
					return // a Notifier's retries during an outage are no news
				}
				select {
				case d.wake <- struct{}{}:
				default:
				}
			})
			if err != nil && ctx.Err() == nil {
				d.log.Warn("deliver: queue notifications stopped; polling only", "err", err)
			}
		}()
	}
	timer := time.NewTimer(d.cfg.PollInterval)
	timer.Stop()
	defer timer.Stop()
loop:
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			break loop
		}
		// Claim only while the signers' line is short: deliveries waiting
		// on the network, not on the CPU, are what Concurrency is for. And
		// claim once half the line is free, not at every place.
		for gate.free() < gate.refill() {
			select {
			case <-gate.room:
			case <-ctx.Done():
				<-slots
				break loop
			}
		}
		free := 1
		for free < d.cfg.Concurrency && free < gate.free() {
			select {
			case slots <- struct{}{}:
				free++
				continue
			default:
			}
			break
		}
		jobs, err := d.queue.Claim(ctx, driver.ClaimOpts{Now: d.cfg.Now(), Lease: d.cfg.Lease, Limit: free})
		out.claimed(ctx, err, d.cfg.Now())
		for range free - len(jobs) {
			<-slots
		}
		gate.enter(len(jobs))
		for _, j := range jobs {
			wg.Go(func() {
				rs := &runSlot{slots: slots, waiters: waiters, held: true, gate: gate, ahead: true}
				defer rs.done()
				d.handle(work, ctx, j, rs)
			})
		}
		if len(jobs) == free && err == nil {
			continue
		}
		timer.Reset(out.pause())
		select {
		case <-timer.C:
		case <-d.wake:
			timer.Stop()
		case <-ctx.Done():
			break loop
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	grace := time.NewTimer(d.cfg.ShutdownGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		d.log.Warn("deliver: shutdown grace ended with deliveries in flight; cutting them off")
		cancelWork()
		<-done
	}
	return nil
}

// RunDue works every delivery due now, waiting for each, and returns how
// many it handled: for tests, and for applications that deliver from a
// scheduled job rather than a long-running Run. Cancelling ctx cuts off the
// deliveries in flight, as the end of Run's grace period does, and RunDue
// returns ctx's error.
func (d *Deliverer) RunDue(ctx context.Context) (int, error) {
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		jobs, err := d.queue.Claim(ctx, driver.ClaimOpts{Now: d.cfg.Now(), Lease: d.cfg.Lease, Limit: d.cfg.Concurrency})
		if err != nil {
			return n, err
		}
		if len(jobs) == 0 {
			return n, nil
		}
		var wg sync.WaitGroup
		for _, j := range jobs {
			wg.Go(func() { d.handle(ctx, ctx, j, nil) })
		}
		wg.Wait()
		n += len(jobs)
	}
}

// waitersPerSlot bounds, per unit of Concurrency, the claimed deliveries Run
// keeps waiting for a busy host without a slot of their own.
const waitersPerSlot = 4

// runSlot is one of Run's Concurrency slots, held by a delivery. A delivery
// that must wait for its host parks: it lends its slot back to Run, so
// deliveries to other hosts are claimed meanwhile, and takes a slot again
// before it sends.
type runSlot struct {
	slots, waiters chan struct{}
	held           bool
	// gate counts the delivery while it is ahead of its signature and not
	// waiting for its host (ahead).
	gate  *cpuGate
	ahead bool
}

// waiting takes the delivery out of the signers' line while it waits for
// its host, or for good once it is signed or done; nil-safe.
func (r *runSlot) waiting() {
	if r != nil && r.ahead {
		r.ahead = false
		r.gate.leave()
	}
}

// back puts a delivery that waited for its host back in the line.
func (r *runSlot) back() {
	if r != nil && !r.ahead {
		r.ahead = true
		r.gate.enter(1)
	}
}

// park gives the slot back if a waiting place is free.
func (r *runSlot) park() bool {
	select {
	case r.waiters <- struct{}{}:
		<-r.slots
		r.held = false
		return true
	default:
		return false
	}
}

// unpark leaves the waiting place and takes a slot again.
func (r *runSlot) unpark(stop context.Context) error {
	<-r.waiters
	select {
	case r.slots <- struct{}{}:
		r.held = true
		return nil
	case <-stop.Done():
		return stop.Err()
	}
}

func (r *runSlot) done() {
	r.waiting()
	if r.held {
		<-r.slots
	}
}

// acquireHost waits for a slot for host, parking rs meanwhile when it can.
func (d *Deliverer) acquireHost(stop context.Context, host string, rs *runSlot) (func(), error) {
	if release, ok := d.limiter.TryAcquire(host); ok {
		return release, nil
	}
	rs.waiting()
	defer rs.back()
	if rs == nil || !rs.park() {
		return d.limiter.Acquire(stop, host)
	}
	release, err := d.limiter.Acquire(stop, host)
	if uerr := rs.unpark(stop); uerr != nil && err == nil {
		release()
		return nil, uerr
	}
	return release, err
}
