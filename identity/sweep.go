package identity

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// OriginLister is optionally implemented by a Lister. Sweep selects rows
// by their stored PDS, so without it a row holding origin fields whose
// stored PDS is on a host just removed from the trusted list is never
// visited and keeps its fields. With it, Sweep also checks every such row
// through the same locked refresh, which clears the fields when the fresh
// resolution is off the bridge (spec 5.2: "a host is removed from the
// trusted list, when the sweep runs").
type OriginLister interface {
	// ListWithOrigin calls fn for every user and community row holding a
	// non-empty origin field (Subject.HasOrigin), whatever its stored PDS;
	// Sweep skips rows on a trusted host, which ListBridged already gave.
	// It stops at fn's first error and returns it. Communities need
	// Subject.Origin, here and from Store.Subject, to be cleared: see
	// Subject.Origin.
	ListWithOrigin(ctx context.Context, fn func(Subject) error) error
}

// SweepOpts are the options of one Sweep run.
type SweepOpts struct {
	// DryRun resolves and verifies only: no purge, no lock, no write.
	DryRun bool
	// ClearCacheFirst empties the cache store before the run. It needs
	// RefresherConfig.Cache to be a *Cache (or CacheClearer) and cannot be
	// combined with DryRun.
	ClearCacheFirst bool
	// TrustedHosts replaces RefresherConfig.TrustedHosts for the run: it
	// picks the rows to check by their stored PDS, and a row whose fresh
	// resolution is off these hosts has its origin fields cleared.
	// Defaults to RefresherConfig.TrustedHosts.
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
	// OffList reports a row checked because it holds origin fields while
	// its stored PDS is not on the trusted list (from an OriginLister).
	OffList bool `json:"offList,omitempty"`
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

// AllMatched reports whether every checked row (OffList ones included)
// matches its verified handle: each was already correct or was updated in
// this run. A dry run with a
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
// identity events. When the Lister is also an OriginLister, rows holding
// origin fields on hosts off the trusted list are checked the same way
// afterwards (marked OffList), so removing a host from the list clears its
// rows' fields. Per-row failures go into the report; Sweep's own error is
// for listing failures, cache clearing and options.
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
	hosts, pol := r.cfg.TrustedHosts, r.bridge
	if o.TrustedHosts != nil {
		var err error
		hosts = o.TrustedHosts
		if pol, err = newBridgePolicy(r.fresh, hosts); err != nil {
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
	visit := func(s Subject, offList bool) error {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			row := r.sweepRow(ctx, s, o.DryRun, pol)
			row.OffList = offList
			finish(row)
		}()
		return nil
	}
	listErr := lister.ListBridged(ctx, hosts, func(s Subject) error {
		if !pol.trusted.Contains(s.PDS) {
			return nil
		}
		return visit(s, false)
	})
	if ol, ok := lister.(OriginLister); ok && listErr == nil {
		listErr = ol.ListWithOrigin(ctx, func(s Subject) error {
			// Rows on a trusted host came from ListBridged.
			if !s.HasOrigin || pol.trusted.Contains(s.PDS) {
				return nil
			}
			return visit(s, true)
		})
	}
	wg.Wait()
	if listErr != nil {
		return rep, listErr
	}
	return rep, nil
}

func (r *Refresher) sweepRow(ctx context.Context, s Subject, dryRun bool, pol *bridgePolicy) SweepRow {
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
	res, err := r.refresh(ctx, s.DID, pol, triggerSweep)
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
