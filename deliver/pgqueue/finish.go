package pgqueue

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fedkit/fedkit/deliver/driver"
)

// finisher groups concurrent Finish calls into one statement, as a database
// groups commits: the first caller to find no flush running records every
// outcome waiting, its own included; callers arriving meanwhile wait, and
// the next flush is led by the first of them. Nothing runs in the
// background, and an idle queue records an outcome at once.
type finisher struct {
	mu       sync.Mutex
	pending  []*finishReq
	flushing bool
}

type finishReq struct {
	ref  driver.JobRef
	o    driver.Outcome
	done chan finishResult
}

type finishResult struct {
	err  error
	lead bool // the caller is to lead the next flush
}

// finishTimeout bounds one flush; it does not follow any one caller's
// context, since the flush carries other callers' outcomes too.
const finishTimeout = 30 * time.Second

// Finish implements driver.Queue. It returns driver.ErrLeaseLost when ref
// is not the job's current claim, or the job is gone.
func (q *Queue) Finish(ctx context.Context, ref driver.JobRef, o driver.Outcome) error {
	r := &finishReq{ref: ref, o: o, done: make(chan finishResult, 1)}
	f := &q.fin
	f.mu.Lock()
	f.pending = append(f.pending, r)
	if f.flushing {
		f.mu.Unlock()
		res := <-r.done
		if !res.lead {
			return res.err
		}
	} else {
		f.flushing = true
		f.mu.Unlock()
	}
	// Leading: flush until r is recorded, then pass the lead on to the
	// first caller waiting.
	var mine error
	for recorded := false; !recorded; {
		f.mu.Lock()
		var batch []*finishReq
		seen := make(map[int64]bool)
		var rest []*finishReq
		for _, p := range f.pending {
			// One job twice in one statement would be updated once; the
			// second waits for the next flush, where its stale token fails
			// as it must.
			if len(batch) < q.cfg.FinishBatch && !seen[p.ref.ID] {
				seen[p.ref.ID] = true
				batch = append(batch, p)
			} else {
				rest = append(rest, p)
			}
		}
		f.pending = rest
		f.mu.Unlock()

		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		errs := q.flush(fctx, batch)
		cancel()
		for i, p := range batch {
			if p == r {
				mine, recorded = errs[i], true
				continue
			}
			p.done <- finishResult{err: errs[i]}
		}
	}
	f.mu.Lock()
	if len(f.pending) > 0 {
		// It stays queued: as leader it gathers itself.
		f.pending[0].done <- finishResult{lead: true}
	} else {
		f.flushing = false
	}
	f.mu.Unlock()
	return mine
}

// flush records batch in one statement, retrying when Postgres broke a
// deadlock with another process's statement.
func (q *Queue) flush(ctx context.Context, batch []*finishReq) []error {
	n := len(batch)
	ids, tokens := make([]int64, n), make([]int64, n)
	results, attempts := make([]int16, n), make([]int32, n)
	retryAt := make([]time.Time, n)
	settled := true
	for i, p := range batch {
		settled = settled && p.o.Result != driver.ResultPending
		ids[i], tokens[i] = p.ref.ID, p.ref.Token
		results[i], attempts[i] = int16(p.o.Result), int32(p.o.Attempts)
		retryAt[i] = p.o.RetryAt
	}
	errs := make([]error, n)
	var done map[int64]bool
	var err error
	for try := 0; try < 3; try++ {
		if settled {
			done, err = q.finishOnce(ctx, q.sql.finishDone, []any{ids, tokens, results})
		} else {
			done, err = q.finishOnce(ctx, q.sql.finish, []any{ids, tokens, results, retryAt, attempts})
		}
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || (pe.Code != "40P01" && pe.Code != "40001") {
			break
		}
	}
	for i := range batch {
		switch {
		case err != nil:
			errs[i] = mapError("finish", err)
		case !done[ids[i]]:
			errs[i] = driver.ErrLeaseLost
		}
	}
	return errs
}

func (q *Queue) finishOnce(ctx context.Context, sql string, args []any) (map[int64]bool, error) {
	done := make(map[int64]bool, len(args[0].([]int64)))
	err := q.query(ctx, sql, args, func(rows pgx.Rows) error {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		done[id] = true
		return nil
	})
	return done, err
}
