package pgqueue

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Notify implements driver.Notifier: it calls wake whenever work may have
// become claimable, until ctx ends, and then returns nil. It wakes once
// listening, when any process enqueues (Enqueue notifies on the queue's
// channel at commit), when the earliest job scheduled at its last wake-up
// comes due by now, the caller's clock (the Deliverer's), and every
// PollInterval as a fallback for the rest (a lapsed lease, a retry
// scheduled since). It holds one pool connection for LISTEN, and
// reconnects after losing it. wake must not block for long; a Deliverer's
// wake is a non-blocking send on a channel.
func (q *Queue) Notify(ctx context.Context, now func() time.Time, wake func()) error {
	// Retries back off from listenRetryMin, but never beyond PollInterval or
	// listenRetryMax (each retry wakes the caller, standing in for the poll),
	// and start again from the bottom once a LISTEN took hold: a connection
	// lost now and then must not leave a listener hours from reconnecting.
	backoff := listenRetryMin
	warned := false // one warning per outage, the retries at debug level
	for ctx.Err() == nil {
		listened, err := q.listen(ctx, now, wake)
		if ctx.Err() != nil {
			break
		}
		if listened {
			backoff, warned = listenRetryMin, false
		}
		level := slog.LevelWarn
		if warned {
			level = slog.LevelDebug
		}
		warned = true
		q.log.Log(ctx, level, "pgqueue: listening for wake-ups failed; polling until it is back", "err", err, "retry_in", backoff)
		wake() // work may have arrived while nobody listened
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
		}
		backoff = max(listenRetryMin, min(2*backoff, q.cfg.PollInterval, listenRetryMax))
	}
	return nil
}

// Bounds of the wait between attempts to LISTEN again.
const (
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = 30 * time.Second
)

// listen holds one connection in LISTEN until ctx ends or the connection
// fails; listened reports whether LISTEN took hold.
func (q *Queue) listen(ctx context.Context, clock func() time.Time, wake func()) (listened bool, err error) {
	conn, err := q.pool.Acquire(ctx)
	if err != nil {
		return false, mapError("listen", err)
	}
	// A connection in LISTEN mode is not handed back to others half-way:
	// on any error it is closed rather than returned to the pool.
	healthy := false
	defer func() {
		if !healthy {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
		conn.Release()
	}()
	var channel string
	if err := conn.QueryRow(ctx, "SELECT "+q.channelSQL(), q.channel).Scan(&channel); err != nil {
		return listened, mapError("listen", err)
	}
	// channel holds only identifier characters: New checks the prefix and
	// schema, and the digest is hexadecimal.
	if _, err := conn.Exec(ctx, `LISTEN "`+channel+`"`); err != nil {
		return listened, mapError("listen", err)
	}
	listened = true
	// Whatever was enqueued before LISTEN took hold was not heard.
	wake()
	for {
		// due_at follows the caller's clock (the Deliverer's Config.Now),
		// so the wait is measured on it and then timed as a duration, never
		// as a wall-clock deadline.
		now := clock()
		wait := q.cfg.PollInterval
		var next *time.Time
		if err := conn.QueryRow(ctx, q.sql.nextDue, now).Scan(&next); err != nil {
			return listened, mapError("listen", err)
		}
		if next != nil {
			if d := next.Sub(now); d < wait {
				wait = d
			}
		}
		wctx, cancel := context.WithTimeout(ctx, wait)
		_, err := conn.Conn().WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			// Leave the channel so the connection is clean for the pool.
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			_, uerr := conn.Exec(uctx, "UNLISTEN *")
			cancel()
			healthy = uerr == nil
			return listened, nil
		case err == nil, errors.Is(err, context.DeadlineExceeded):
			wake()
		default:
			return listened, mapError("listen", err)
		}
	}
}
