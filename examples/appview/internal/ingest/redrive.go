package ingest

import (
	"context"
	"errors"
	"time"

	"github.com/fedkit/fedkit/examples/appview/internal/jetstream"
	"github.com/fedkit/fedkit/examples/appview/internal/store"
)

// LaneRunner runs fn on the lane that owns did, so redriven events keep
// the per-DID order of live ones. (*jetstream.Consumer).Do is one.
type LaneRunner func(ctx context.Context, did string, fn func(context.Context)) error

// DirectLanes runs fn at once, for a redriver without a live consumer
// (tests, one-off redrives).
func DirectLanes(ctx context.Context, _ string, fn func(context.Context)) error {
	fn(ctx)
	return nil
}

// RedriveBatchDefault is how many rows one redrive pass claims.
const RedriveBatchDefault = 100

// RedriveOnce retries every due row once (with the in-line retries of a
// transient failure) and reports how many rows it took. Done and permanent
// rows are retired; unresolved and transient ones spend an attempt and die
// at their class's budget; busy ones are pushed back for free.
func (in *Ingester) RedriveOnce(ctx context.Context, lanes LaneRunner) (int, error) {
	now := in.cfg.Now()
	rows, err := in.d.Store.ClaimDue(ctx, now, in.cfg.RedriveInterval, RedriveBatchDefault)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, r := range rows {
		row := r
		var rowErr error
		runErr := lanes(ctx, row.DID, func(ctx context.Context) { rowErr = in.redriveRow(ctx, row) })
		if runErr != nil {
			return 0, runErr
		}
		if rowErr != nil {
			errs = append(errs, rowErr)
		}
	}
	return len(rows), errors.Join(errs...)
}

func (in *Ingester) redriveRow(ctx context.Context, r store.RedriveRow) error {
	f, err := jetstream.Parse(r.Event)
	if err != nil {
		in.log.Warn("ingest: retiring unparseable redrive row", "id", r.ID, "did", r.DID)
		return in.d.Store.Retire(ctx, r.ID)
	}
	perr := in.processRetrying(ctx, f)
	out := Classify(perr)
	switch out {
	case Done:
		return in.d.Store.Retire(ctx, r.ID)
	case Permanent:
		in.log.Warn("ingest: redriven event failed permanently", "did", r.DID, "time_us", r.TimeUS, "reason", Code(perr))
		return in.d.Store.Retire(ctx, r.ID)
	}
	if ctx.Err() != nil {
		return ctx.Err() // the claim lease expires and the row comes back
	}
	budget := in.cfg.UnresolvedAttempts
	if out == Transient {
		budget = in.cfg.TransientAttempts
	}
	now := in.cfg.Now()
	dead, err := in.d.Store.Reschedule(ctx, r.ID, now, now.Add(in.retryDelay(out, perr)), Code(perr), out != Busy, budget)
	if err != nil {
		return err
	}
	if dead {
		in.log.Warn("ingest: redrive budget spent", "did", r.DID, "time_us", r.TimeUS, "reason", Code(perr))
	}
	return nil
}

// DeadRetentionDefault is how long dead redrive rows are kept.
const DeadRetentionDefault = 7 * 24 * time.Hour

// RunRedriver redrives at once (rows left by a previous run) and then
// every interval, until ctx ends.
func (in *Ingester) RunRedriver(ctx context.Context, interval time.Duration, lanes LaneRunner) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
		n, err := in.RedriveOnce(ctx, lanes)
		if err != nil && ctx.Err() == nil {
			in.log.Error("ingest: redrive pass", "err", err)
		} else if n > 0 {
			in.log.Info("ingest: redrive pass", "rows", n)
		}
		if err := in.d.Store.PurgeDead(ctx, in.cfg.Now(), DeadRetentionDefault); err != nil && ctx.Err() == nil {
			in.log.Error("ingest: purge dead redrive rows", "err", err)
		}
	}
}
