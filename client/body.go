package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// body caps a response body and releases the request's context on Close.
// It also runs the request's one timer, for both Config.Timeout and
// Config.ResponseHeaderTimeout: one runtime timer per request is cheaper than
// the transport's own header timer on top of the overall one. The fast path
// only records times; the timer is armed once, for the earlier of the two
// timeouts, and its callback works out whether a deadline has passed or when
// to look again.
type body struct {
	rc       io.ReadCloser
	left     int64 // bytes still allowed; -1 means uncapped
	limit    int64
	err      error
	cancel   context.CancelFunc
	timer    *time.Timer
	timedOut atomic.Bool
	closed   bool
	// headerTimedOut says the response-header timeout, not the overall one,
	// expired the request: it names the cause in the error.
	headerTimedOut atomic.Bool

	begin         time.Time     // of the exchange; durations below count from it
	overall       time.Duration // Config.Timeout
	headerTimeout time.Duration // Config.ResponseHeaderTimeout; 0 = the overall timeout covers it
	trace         httptrace.ClientTrace
	awaiting      atomic.Bool  // a request of this exchange awaits its headers
	wroteAt       atomic.Int64 // when that request was fully written; 0 = not yet
	mu            sync.Mutex   // orders tick against stopTimer
	stopped       bool         // the timer must not be re-armed
}

// start arms the timer and hooks the header timeout into ctx.
func (b *body) start(ctx context.Context, overall, header time.Duration) context.Context {
	b.begin = time.Now()
	b.overall = overall
	if header <= 0 || header >= overall {
		// The overall timeout fires first anyway.
		b.timer = time.AfterFunc(overall, b.expire)
		return ctx
	}
	b.headerTimeout = header
	// No request is written before header has passed: the first look.
	b.timer = time.AfterFunc(header, b.tick)
	b.trace.WroteRequest = b.wroteRequest
	return httptrace.WithClientTrace(ctx, &b.trace)
}

// sending marks the start of one round trip (the request or a redirect hop).
func (b *body) sending() {
	if b.headerTimeout != 0 {
		b.wroteAt.Store(0)
		b.awaiting.Store(true)
	}
}

// wroteRequest starts the header timeout, as http.Transport's
// ResponseHeaderTimeout does: once the request is fully written. It runs on
// the transport's writer goroutine.
func (b *body) wroteRequest(info httptrace.WroteRequestInfo) {
	if info.Err == nil {
		b.wroteAt.Store(int64(max(time.Since(b.begin), 1)))
	}
}

// headersIn ends the header timeout of the current round trip.
func (b *body) headersIn() {
	if b.headerTimeout != 0 {
		b.awaiting.Store(false)
	}
}

// tick is the timer's callback when a header timeout is configured: it
// expires the request if the overall deadline or the current round trip's
// header deadline has passed, and otherwise re-arms the timer for the next
// one.
func (b *body) tick() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	now := time.Since(b.begin)
	next := b.overall
	if b.awaiting.Load() {
		if w := time.Duration(b.wroteAt.Load()); w == 0 {
			// Still connecting or writing: look again one header timeout on.
			next = min(next, now+b.headerTimeout)
		} else {
			next = min(next, w+b.headerTimeout)
		}
	}
	if now >= next {
		b.headerTimedOut.Store(next < b.overall)
		b.expire()
		return
	}
	b.timer.Reset(next - now)
}

// stopTimer stops the timer for good; a running tick cannot re-arm it.
func (b *body) stopTimer() {
	if b.headerTimeout != 0 {
		b.mu.Lock()
		b.stopped = true
		b.mu.Unlock()
	}
	b.timer.Stop()
}

func (b *body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left < 0 {
		return b.rc.Read(p)
	}
	// Ask for one byte past the cap: getting it proves the body is too
	// large, while a body of exactly the cap ends cleanly.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	if int64(n) > b.left {
		n = int(b.left)
		b.left = 0
		b.err = fmt.Errorf("%w: over the %d-byte limit", ErrTooLarge, b.limit)
		return n, b.err
	}
	b.left -= int64(n)
	if err != nil && err != io.EOF && b.timedOut.Load() {
		err = fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return n, err
}

func (b *body) Close() error {
	err := b.rc.Close()
	if !b.closed {
		b.closed = true
		b.release()
	}
	return err
}

// expire is the timer's callback: it marks the request timed out and
// cancels it.
func (b *body) expire() {
	b.timedOut.Store(true)
	b.cancel()
}

// fail ends a request that produced no response.
func (b *body) fail(err error) (*http.Response, error) {
	b.release()
	if b.headerTimedOut.Load() {
		err = fmt.Errorf("no response headers within %v: %w", b.headerTimeout, err)
	}
	return nil, wrapTimeout(err, &b.timedOut)
}

// release stops the timer and cancels the request's context.
func (b *body) release() {
	b.stopTimer()
	b.cancel()
}
