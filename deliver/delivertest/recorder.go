package delivertest

import (
	"context"
	"sync"

	"github.com/fedkit/fedkit/deliver"
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
	onAttempt, onFailure, onSettled := cfg.OnAttempt, cfg.OnFailure, cfg.OnSettled
	cfg.OnAttempt = func(ctx context.Context, a deliver.Attempt) {
		r.mu.Lock()
		r.attempts = append(r.attempts, a)
		r.mu.Unlock()
		if onAttempt != nil {
			onAttempt(ctx, a)
		}
	}
	cfg.OnFailure = func(ctx context.Context, f deliver.Failure) {
		r.mu.Lock()
		r.failures = append(r.failures, f)
		r.mu.Unlock()
		if onFailure != nil {
			onFailure(ctx, f)
		}
	}
	cfg.OnSettled = func(ctx context.Context, s deliver.Settlement) {
		r.mu.Lock()
		r.settled = append(r.settled, s)
		r.mu.Unlock()
		if onSettled != nil {
			onSettled(ctx, s)
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
func (r *Recorder) Results() map[deliver.Result]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[deliver.Result]int{}
	for _, s := range r.settled {
		m[s.Result]++
	}
	return m
}
