package fetch

import (
	"context"
	"sync/atomic"
)

// BudgetDefault is a reasonable budget for one incoming activity, as
// Mastodon allows 1,000 discoveries per request.
const BudgetDefault = 1000

// Budget caps the fetches made on behalf of one incoming request, so one
// activity cannot make the server fetch without bound. Every fetch a
// Fetcher makes under a context carrying the Budget (a document, a page,
// a WebFinger, host-meta or NodeInfo request, a re-fetch from an id)
// spends one unit; redirect hops and the second signature knock belong to
// the fetch that caused them. At zero, fetches fail with
// ErrBudgetExhausted before any request is sent.
// A Budget is safe for concurrent use.
type Budget struct {
	left atomic.Int64
}

// NewBudget returns a Budget of n fetches.
func NewBudget(n int) *Budget {
	b := &Budget{}
	b.left.Store(int64(n))
	return b
}

// Remaining returns how many fetches are left.
func (b *Budget) Remaining() int {
	if n := b.left.Load(); n > 0 {
		return int(n)
	}
	return 0
}

// take spends one fetch, reporting whether one was left.
func (b *Budget) take() bool {
	return b.left.Add(-1) >= 0
}

type budgetKey struct{}

// WithBudget returns a context whose fetches spend from b. The budget is
// request-scoped data, which is what a context carries.
func WithBudget(ctx context.Context, b *Budget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// BudgetFrom returns the context's Budget, or nil when there is none.
func BudgetFrom(ctx context.Context) *Budget {
	b, _ := ctx.Value(budgetKey{}).(*Budget)
	return b
}

func spend(ctx context.Context) error {
	if b := BudgetFrom(ctx); b != nil && !b.take() {
		return ErrBudgetExhausted
	}
	return nil
}
