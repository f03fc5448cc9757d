package pgqueue_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/fedkit/fedkit/deliver/pgqueue"
)

// With the database unreachable, Notify keeps trying to LISTEN, waking its
// caller at each try in place of the poll it cannot hear, and never waits
// more than 30 s between tries however long the outage or PollInterval.
func TestNotifyRetriesWhileDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Port 1 refuses at once, so no dial blocks the bubble's clock.
		pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		q, err := pgqueue.New(pool, &pgqueue.Config{PollInterval: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wakes []time.Time
		done := make(chan error)
		go func() { done <- q.Notify(ctx, time.Now, func() { wakes = append(wakes, time.Now()) }) }()
		time.Sleep(time.Hour)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if len(wakes) < 100 {
			t.Fatalf("%d wake-ups in an hour of outage, want one at least every 30 s", len(wakes))
		}
		for i := 1; i < len(wakes); i++ {
			if gap := wakes[i].Sub(wakes[i-1]); gap > 30*time.Second {
				t.Fatalf("wake-up %d came %v after the one before, want at most 30 s", i, gap)
			}
		}
	})
}
