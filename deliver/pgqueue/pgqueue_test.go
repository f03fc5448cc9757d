package pgqueue_test

import (
	"context"
	"testing"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/delivertest"
	"github.com/fedkit/fedkit/deliver/pgqueue"
	"github.com/fedkit/fedkit/internal/pgtest"
)

// newQueue returns a migrated queue in a fresh schema.
func newQueue(t testing.TB, cfg *pgqueue.Config) *pgqueue.Queue {
	t.Helper()
	q, err := pgqueue.New(pgtest.Pool(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return q
}

func TestQueue(t *testing.T) {
	delivertest.TestQueue(t, func(t *testing.T) deliver.Queue { return newQueue(t, nil) })
}

// Small fan-outs go through COPY too when the threshold says so.
func TestQueueCopyPath(t *testing.T) {
	delivertest.TestQueue(t, func(t *testing.T) deliver.Queue {
		return newQueue(t, &pgqueue.Config{CopyThreshold: 1})
	})
}
