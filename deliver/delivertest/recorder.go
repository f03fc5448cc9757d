package delivertest

import (
	"context"
	"sync"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

// Recorder keeps what a Deliverer's hooks report, for an application's
// tests. Install it on a Config before deliver.New; it is safe for
// concurrent use.
type Recorder struct {
	mu       sync.Mutex
	attempts []deliver.Attempt
	failures []deliver.Failure
	settled  []deliver.Settlement
}

// Install sets cfg's OnAttempt, OnFailure and OnSettled to record, calling
// any hooks already set afterwards.
func (r *Recorder) Install(cfg *deliver.Config) {
	cfg.OnAttempt = record(r, &r.attempts, cfg.OnAttempt)
	cfg.OnFailure = record(r, &r.failures, cfg.OnFailure)
	cfg.OnSettled = record(r, &r.settled, cfg.OnSettled)
}

// record returns a hook appending to list under r's lock, then calling next.
func record[T any](r *Recorder, list *[]T, next func(context.Context, T)) func(context.Context, T) {
	return func(ctx context.Context, v T) {
		r.mu.Lock()
		*list = append(*list, v)
		r.mu.Unlock()
		if next != nil {
			next(ctx, v)
		}
	}
}

// Attempts returns the attempts reported so far, in order.
func (r *Recorder) Attempts() []deliver.Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]deliver.Attempt(nil), r.attempts...)
}

// Failures returns the permanent failures reported so far, in order.
func (r *Recorder) Failures() []deliver.Failure {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]deliver.Failure(nil), r.failures...)
}

// Settled returns the settlements reported so far, in order.
func (r *Recorder) Settled() []deliver.Settlement {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]deliver.Settlement(nil), r.settled...)
}

// Results counts the settlements by result.
func (r *Recorder) Results() map[driver.Result]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[driver.Result]int{}
	for _, s := range r.settled {
		m[s.Result]++
	}
	return m
}
