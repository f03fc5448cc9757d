package identity

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fedkit/fedkit/origin"
)

// SweepConcurrencyDefault is how many rows Sweep checks at once.
const SweepConcurrencyDefault = 4

// Lister lists the application's rows for Sweep.
type Lister interface {
	// ListBridged calls fn for every user and community row whose PDS
	// host may be in hosts (a hint: Sweep filters again). It stops at
	// fn's first error and returns it.
	ListBridged(ctx context.Context, hosts []string, fn func(Subject) error) error
}

// SweepOpts are the options of one Sweep run.
type SweepOpts struct {
	// DryRun resolves and verifies only: no purge, no lock, no write.
	DryRun bool
	// ClearCacheFirst empties the cache store before the run. It needs
	// RefresherConfig.Cache to be a *Cache (or CacheClearer) and cannot be
	// combined with DryRun.
	ClearCacheFirst bool
	// TrustedHosts picks the rows to check by their stored PDS. Defaults to
	// RefresherConfig.TrustedHosts.
	TrustedHosts []string
	// Concurrency is how many rows are checked at once; size the lock's
	// pool to it. Defaults to SweepConcurrencyDefault.
	Concurrency int
	// Progress, if set, is called after each row, from one goroutine at a
	// time.
	Progress func(SweepProgress)
}

// SweepProgress reports a Sweep's progress.
type SweepProgress struct {
	Done int      // rows finished so far
	Row  SweepRow // the row just finished
}

// SweepRow is one checked row.
type SweepRow struct {
	// DID is the row's DID.
	DID DID `json:"did"`
	// Kind is the row's kind.
	Kind     Kind   `json:"kind"`
	Stored   Handle `json:"stored,omitempty"`   // the handle stored before the run
	Verified Handle `json:"verified,omitempty"` // the verified handle, when resolution got that far
	Reason   string `json:"reason"`             // a Reason constant: the machine-readable outcome
	// OriginCleared reports that the row's origin fields were cleared
	// because its DID is no longer on the bridge.
	OriginCleared bool `json:"originCleared,omitempty"`
	// Err is the cause, for logs. It may carry remote text: report Reason,
	// not Err, to anyone outside.
	Err error `json:"-"`
}

// Matched reports whether the row ends the run matching its verified handle.
func (r SweepRow) Matched() bool { return r.Reason == ReasonMatched || r.Reason == ReasonUpdated }

// SweepReport is the outcome of a Sweep, one row per bridged subject, in
// completion order.
type SweepReport struct {
	// DryRun reports a dry run: nothing was written.
	DryRun bool `json:"dryRun"`
	// Rows holds one row per subject.
	Rows []SweepRow `json:"rows"`
}

// AllMatched reports whether every bridged row matches its verified handle:
// each was already correct or was updated in this run. A dry run with a
// pending update is not all matched, nor is a run with any error.
func (r *SweepReport) AllMatched() bool {
	for _, row := range r.Rows {
		if !row.Matched() {
			return false
		}
	}
	return true
}

// Counts tallies rows by reason.
func (r *SweepReport) Counts() map[string]int {
	m := make(map[string]int)
	for _, row := range r.Rows {
		m[row.Reason]++
	}
	return m
}

// ErrSweepOptions is returned by Sweep for contradictory options.
var ErrSweepOptions = errors.New("identity: invalid sweep options")

// Sweep re-checks every bridged row the Lister returns: each DID is resolved
// fresh and, unless DryRun, written through the same locked refresh as
// identity events. Per-row failures go into the report; Sweep's own error
// is for listing failures, cache clearing and options.
func (r *Refresher) Sweep(ctx context.Context, lister Lister, opts *SweepOpts) (*SweepReport, error) {
	var o SweepOpts
	if opts != nil {
		o = *opts
	}
	if o.DryRun && o.ClearCacheFirst {
		return nil, errors.Join(ErrSweepOptions, errors.New("ClearCacheFirst cannot be combined with DryRun"))
	}
	// A real run writes through the locked refresh: fail closed before
	// clearing anything when there is no usable lock.
	if !o.DryRun && (r.cfg.Lock == nil || r.cfg.Lock.Wait() <= 0) {
		return nil, ErrLockUnavailable
	}
	if o.Concurrency <= 0 {
		o.Concurrency = SweepConcurrencyDefault
	}
	hosts, trusted := r.cfg.TrustedHosts, r.trusted
	if o.TrustedHosts != nil {
		var err error
		hosts = o.TrustedHosts
		if trusted, err = origin.NewTrustedHosts(hosts); err != nil {
			return nil, errors.Join(ErrSweepOptions, err)
		}
	}
	if !slices.ContainsFunc(hosts, func(h string) bool { return strings.TrimSpace(h) != "" }) {
		// Nothing would be checked, and an empty report reads as "all
		// matched": refuse rather than pass a reconciliation gate vacuously.
		return nil, errors.Join(ErrSweepOptions, errors.New("no trusted hosts"))
	}
	if o.ClearCacheFirst {
		var clearer CacheClearer
		switch c := r.cfg.Cache.(type) {
		case *Cache:
			clearer, _ = c.Store().(CacheClearer)
			c.clearNegative()
		case CacheClearer:
			clearer = c
		}
		if clearer == nil {
			return nil, errors.Join(ErrSweepOptions, errors.New("ClearCacheFirst needs a clearable cache"))
		}
		if err := clearer.Clear(ctx); err != nil {
			return nil, err
		}
	}

	rep := &SweepReport{DryRun: o.DryRun}
	var (
		mu   sync.Mutex
		done atomic.Int64
		wg   sync.WaitGroup
		sem  = make(chan struct{}, o.Concurrency)
	)
	finish := func(row SweepRow) {
		mu.Lock()
		defer mu.Unlock()
		rep.Rows = append(rep.Rows, row)
		if o.Progress != nil {
			o.Progress(SweepProgress{Done: int(done.Add(1)), Row: row})
		}
	}
	listErr := lister.ListBridged(ctx, hosts, func(s Subject) error {
		if !trusted.Contains(s.PDS) {
			return nil
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			finish(r.sweepRow(ctx, s, o.DryRun))
		}()
		return nil
	})
	wg.Wait()
	if listErr != nil {
		return rep, listErr
	}
	return rep, nil
}

func (r *Refresher) sweepRow(ctx context.Context, s Subject, dryRun bool) SweepRow {
	row := SweepRow{DID: s.DID, Kind: s.Kind, Stored: s.Handle}
	if dryRun {
		_, h, err := r.resolveVerified(ctx, s.DID)
		row.Verified = h
		switch {
		case err != nil:
			row.Reason, row.Err = reasonOf(err), err
		case h == s.Handle:
			row.Reason = ReasonMatched
		default:
			row.Reason = ReasonWouldUpdate
		}
		return row
	}
	res, err := r.refresh(ctx, s.DID)
	row.Verified, row.OriginCleared = res.new, res.originCleared
	switch {
	case err != nil:
		row.Reason, row.Err = reasonOf(err), err
	case res.updated:
		row.Reason = ReasonUpdated
	default:
		row.Reason = ReasonMatched
	}
	return row
}

func reasonOf(err error) string {
	var re *RefreshError
	if errors.As(err, &re) {
		return re.Reason
	}
	return ReasonStoreFailed
}
