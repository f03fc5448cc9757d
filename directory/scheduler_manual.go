package directory

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ManualCommand is one of the manual lifecycle commands that share the
// scheduler's lease.
type ManualCommand string

// The manual commands (`relay directory register|heartbeat|sync origin`).
const (
	ManualRegister  ManualCommand = "register"
	ManualHeartbeat ManualCommand = "heartbeat"
	ManualSync      ManualCommand = "sync"
)

// ManualOpts configures RunManual.
type ManualOpts struct {
	// Store is the scheduler's state store. Set it when the file-backed
	// scheduler is enabled: the command then takes the same per-Directory
	// lease and records its success, so the scheduler does not repeat it.
	// Nil runs the command without lease or state.
	Store StateStore
	// Relay is the relay's actor URL, for the heartbeat jitter. Required
	// with Store.
	Relay string
	// Call is passed to the client (interactive defaults when nil).
	Call *CallOpts
	// Lease tunes the lease. Its Wait defaults to ManualLeaseWaitDefault
	// here: a busy scheduler finishes first.
	Lease *LeaseOpts
	// Now is the clock. Defaults to time.Now. The Client and
	// MemoryStateStore handed to RunManual take it when they have no Now
	// of their own.
	Now func() time.Time
}

// RunManual performs an operator-triggered register, heartbeat or sync.
// With a Store it takes the Directory's lease as the scheduler does,
// waiting up to Lease.Wait (ManualLeaseWaitDefault) for a busy scheduler to
// release it, and returns ErrLeaseHeld if it is still held then. A failed
// command leaves the persisted state alone.
func RunManual(ctx context.Context, lc Lifecycle, cmd ManualCommand, origin string, opts *ManualOpts) (*Result, error) {
	var o ManualOpts
	if opts != nil {
		o = *opts
	}
	if o.Now == nil {
		o.Now = time.Now
	} else {
		adoptClock(lc, o.Now)
		adoptClock(o.Store, o.Now)
	}
	do := func(ctx context.Context) (*Result, error) {
		switch cmd {
		case ManualRegister:
			return lc.Register(ctx, origin, o.Call)
		case ManualHeartbeat:
			return lc.Heartbeat(ctx, origin, o.Call)
		case ManualSync:
			return lc.Sync(ctx, origin, o.Call)
		}
		return nil, fmt.Errorf("directory: unknown manual command %q", cmd)
	}
	if o.Store == nil {
		return do(ctx)
	}
	if o.Relay == "" {
		return nil, fmt.Errorf("%w: Relay is required with Store", ErrSchedulerConfig)
	}
	lease, err := AcquireLease(ctx, o.Store, origin, interactiveLease(o.Lease))
	if err != nil {
		return nil, err
	}
	defer lease.Release()
	rec, err := lease.Load(lease.Context())
	if err != nil {
		return nil, err
	}
	res, err := do(lease.Context())
	if err != nil {
		if lease.Lost() {
			return res, errors.Join(err, ErrLeaseLost)
		}
		return res, err
	}
	rec = recordSuccess(rec, res, lc.ProfileDigest(), o.Relay, origin, o.Now())
	if err := lease.saveAfter(ctx, rec); err != nil {
		return res, fmt.Errorf("directory: %s succeeded but its state was not recorded: %w", cmd, err)
	}
	return res, nil
}
