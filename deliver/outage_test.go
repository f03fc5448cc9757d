package deliver_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

// downQueue is a queue whose store is away while down is set: Claim and
// Enqueue fail as a database's would, and its Notifier, like pgqueue's,
// retries every millisecond and wakes its caller at each retry.
type downQueue struct {
	*deliver.MemoryQueue
	down   atomic.Bool
	claims atomic.Int64
}

var _ driver.Notifier = (*downQueue)(nil)

var errConnRefused = fmt.Errorf("dial tcp 127.0.0.1:5432: connection refused: %w", driver.ErrQueueUnavailable)

func (q *downQueue) Claim(ctx context.Context, o driver.ClaimOpts) ([]*driver.Job, error) {
	q.claims.Add(1)
	if q.down.Load() {
		return nil, errConnRefused
	}
	return q.MemoryQueue.Claim(ctx, o)
}

func (q *downQueue) Enqueue(ctx context.Context, e *driver.Envelope) error {
	if q.down.Load() {
		return errConnRefused
	}
	return q.MemoryQueue.Enqueue(ctx, e)
}

func (q *downQueue) Notify(ctx context.Context, _ func() time.Time, wake func()) error {
	for {
		select {
		case <-time.After(5 * time.Millisecond):
			wake()
		case <-ctx.Done():
			return nil
		}
	}
}

// records keeps the log's records, by level.
type records struct {
	mu   sync.Mutex
	msgs map[slog.Level][]string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.msgs == nil {
		r.msgs = map[slog.Level][]string{}
	}
	r.msgs[rec.Level] = append(r.msgs[rec.Level], rec.Message)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }
func (r *records) at(l slog.Level) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs[l]...)
}

// While the queue is away, Run backs off (from PollInterval doubling to
// 5 s) instead of claiming every poll or at every wake-up of a Notifier
// that is retrying, logs one error for the whole outage and one line when
// the queue answers again, and delivers what waits within 5 s of the
// queue's return. Enqueue's error is the queue's, matching
// ErrQueueUnavailable.
func TestRunBacksOffWhileQueueIsDown(t *testing.T) {
	ib := bubbleInbox(t, nil)
	synctest.Test(t, func(t *testing.T) {
		q := &downQueue{MemoryQueue: &deliver.MemoryQueue{}}
		logs := &records{}
		d, err := deliver.New(q, &keys{}, bubbleClient(t, stuckResolver{}),
			&deliver.Config{PollInterval: 10 * time.Millisecond, Logger: slog.New(logs)})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Send(context.Background(), testKeyID, activity("1"), []string{ib.URL("/inbox")}); err != nil {
			t.Fatal(err)
		}
		q.down.Store(true)
		stop := startRun(t, d)
		defer stop()
		if err := d.Send(context.Background(), testKeyID, activity("2"), []string{ib.URL("/inbox")}); !errors.Is(err, driver.ErrQueueUnavailable) {
			t.Fatalf("Send during the outage: %v, want ErrQueueUnavailable", err)
		}
		time.Sleep(time.Minute)
		// 10 ms doubling to 5 s: 10 claims in the first 5 s, then one every
		// 5 s. Polling would have made 6,000, heeding the Notifier 12,000.
		if n := q.claims.Load(); n > 25 {
			t.Fatalf("%d claims in a minute of outage, want a backoff (at most 25)", n)
		}
		if errs := logs.at(slog.LevelError); len(errs) != 1 || !strings.Contains(errs[0], "claim failed") {
			t.Fatalf("error log during the outage: %q, want one line", errs)
		}
		q.down.Store(false)
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := len(ib.requests()); n != 1 {
			t.Fatalf("%d deliveries 5 s after the queue came back, want 1", n)
		}
		if infos := logs.at(slog.LevelInfo); len(infos) != 1 || !strings.Contains(infos[0], "answers again") {
			t.Fatalf("info log after the outage: %q, want one line", infos)
		}
		// Back to polling: 10 ms apart, a wake-up each 5 ms heeded.
		before := q.claims.Load()
		time.Sleep(time.Second)
		if n := q.claims.Load() - before; n < 100 {
			t.Fatalf("%d claims in the second after the outage, want Run back to its poll and wake-ups", n)
		}
		if errs := logs.at(slog.LevelError); len(errs) != 1 {
			t.Fatalf("error log: %q, want the outage's one line", errs)
		}
	})
}
