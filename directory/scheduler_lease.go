package directory

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// LeaseOpts tunes AcquireLease. The zero value is usable.
type LeaseOpts struct {
	// TTL is how long each grant lasts. Defaults to LeaseTTLDefault.
	TTL time.Duration
	// Renew is the renewal period; it must be well under TTL. Defaults to
	// LeaseRenewDefault.
	Renew time.Duration
	// Wait is how long AcquireLease keeps trying, about once a second,
	// while another owner holds the lease. AcquireLease treats zero or
	// negative as no wait (the scheduler never waits: the holder serves
	// the slot). RunManual and Unregister, which an operator is waiting
	// on, use ManualLeaseWaitDefault for zero and no wait for negative.
	// Defaults to 0.
	Wait time.Duration
}

// withDefaults fills TTL and Renew and checks that renewal comes well
// before expiry.
func (o LeaseOpts) withDefaults() (LeaseOpts, error) {
	if o.TTL <= 0 {
		o.TTL = LeaseTTLDefault
	}
	if o.Renew <= 0 {
		o.Renew = LeaseRenewDefault
	}
	if o.Renew >= o.TTL {
		return o, fmt.Errorf("%w: the lease renewal period must be shorter than its TTL", ErrSchedulerConfig)
	}
	return o, nil
}

// ManualLeaseWaitDefault is how long RunManual and Unregister wait for a
// busy scheduler to finish its reconciliation and release the lease. It
// matches the longest remote Retry-After an interactive command waits out.
const ManualLeaseWaitDefault = MaxRetryWaitDefault

// leasePoll is the retry period while waiting for a held lease.
const leasePoll = time.Second

// interactiveLease returns o with the interactive wait applied.
func interactiveLease(o *LeaseOpts) *LeaseOpts {
	var l LeaseOpts
	if o != nil {
		l = *o
	}
	if l.Wait == 0 {
		l.Wait = ManualLeaseWaitDefault
	}
	return &l
}

// Lease is a held, self-renewing StateStore lease for one Directory. Work
// done under it uses Context, which is cancelled (cause ErrLeaseLost) the
// moment ownership is lost, so an in-flight request stops.
type Lease struct {
	store  StateStore
	origin string
	token  string
	ttl    time.Duration

	ctx    context.Context
	cancel context.CancelCauseFunc
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// AcquireLease takes origin's lease, waiting up to opts.Wait while another
// owner holds it, or returns ErrLeaseHeld. It renews the lease in the
// background until Release or until ctx ends.
func AcquireLease(ctx context.Context, store StateStore, origin string, opts *LeaseOpts) (*Lease, error) {
	var o LeaseOpts
	if opts != nil {
		o = *opts
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	tok, granted, err := acquireWaiting(ctx, store, origin, o.TTL, o.Wait)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancelCause(ctx)
	l := &Lease{
		store: store, origin: origin, token: tok, ttl: o.TTL,
		ctx: lctx, cancel: cancel, stop: make(chan struct{}), done: make(chan struct{}),
	}
	go l.renew(o.Renew, granted)
	return l, nil
}

// acquireWaiting retries a held lease until wait has passed. It also
// returns when the successful attempt started: the grant runs from no
// earlier than that.
func acquireWaiting(ctx context.Context, store StateStore, origin string, ttl, wait time.Duration) (string, time.Time, error) {
	start := time.Now()
	tok, err := store.Acquire(ctx, origin, ttl)
	if wait <= 0 || !errors.Is(err, ErrLeaseHeld) {
		return tok, start, err
	}
	deadline := time.Now().Add(wait)
	for errors.Is(err, ErrLeaseHeld) {
		left := time.Until(deadline)
		if left <= 0 {
			return "", time.Time{}, err
		}
		t := time.NewTimer(min(leasePoll, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return "", time.Time{}, ctx.Err()
		case <-t.C:
		}
		start = time.Now()
		tok, err = store.Acquire(ctx, origin, ttl)
	}
	return tok, start, err
}

// renew extends the lease every period. last is when the newest grant or
// renewal was requested, not when it returned: the store's expiry runs from
// some moment in between, so counting from the request never overstates
// how long the lease is still ours.
func (l *Lease) renew(every time.Duration, last time.Time) {
	defer close(l.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.ctx.Done():
			return
		case <-t.C:
		}
		start := time.Now()
		rctx, cancel := context.WithTimeout(l.ctx, every)
		err := l.store.Renew(rctx, l.origin, l.token, l.ttl)
		cancel()
		switch {
		case err == nil:
			last = start
		case errors.Is(err, ErrLeaseLost):
			l.cancel(ErrLeaseLost)
			return
		case time.Since(last) >= l.ttl:
			// The store was unreachable for a whole TTL: another owner
			// may hold the lease by now, so act as if it were lost.
			l.cancel(ErrLeaseLost)
			return
		}
	}
}

// Context is cancelled when the lease is lost or released, or when the
// context given to AcquireLease ends.
func (l *Lease) Context() context.Context { return l.ctx }

// Token is the fencing token of this grant.
func (l *Lease) Token() string { return l.token }

// Lost reports whether ownership was lost (as opposed to released).
func (l *Lease) Lost() bool { return errors.Is(context.Cause(l.ctx), ErrLeaseLost) }

// Save writes rec fenced by this lease's token.
func (l *Lease) Save(ctx context.Context, rec StateRecord) error {
	err := l.store.Save(ctx, l.origin, l.token, rec)
	if errors.Is(err, ErrLeaseLost) {
		l.cancel(ErrLeaseLost)
	}
	return err
}

// stateWriteTimeout bounds a state write made after the lifecycle call.
const stateWriteTimeout = 10 * time.Second

// saveAfter writes rec once a request has reached the Directory: the write
// outlives ctx's cancellation (an operator's ^C after the Directory acted
// must not leave stale state), still fenced by the token.
func (l *Lease) saveAfter(ctx context.Context, rec StateRecord) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stateWriteTimeout)
	defer cancel()
	return l.Save(sctx, rec)
}

// Load reads the record; under the lease it is the authoritative state.
func (l *Lease) Load(ctx context.Context) (StateRecord, error) {
	return l.store.Load(ctx, l.origin)
}

// Release stops renewal and drops the lease. It uses its own short
// deadline so it still runs during a graceful shutdown, after the parent
// context has ended. Safe to call more than once.
func (l *Lease) Release() error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		lost := l.Lost()
		l.cancel(context.Canceled)
		if lost {
			err = ErrLeaseLost
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(l.ctx), 5*time.Second)
		defer cancel()
		err = l.store.Release(ctx, l.origin, l.token)
	})
	return err
}
