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
// It also holds the request's one timer: armed for Config.Timeout, cut to
// Config.ResponseHeaderTimeout once a request is written and restored when its
// headers are in. One runtime timer per request is cheaper than the
// transport's own header timer on top of the overall one.
type body struct {
	rc       io.ReadCloser
	left     int64 // bytes still allowed; -1 means uncapped
	limit    int64
	err      error
	cancel   context.CancelFunc
	timer    *time.Timer // the request's overall timeout
	timedOut atomic.Bool
	closed   bool

	deadline      time.Time     // of the overall timeout
	headerTimeout time.Duration // Config.ResponseHeaderTimeout
	trace         httptrace.ClientTrace
	mu            sync.Mutex // guards the fields below and header-phase Resets
	awaiting      bool       // a request of this exchange awaits its headers
	headerArmed   bool       // the timer runs the header timeout
}

// start arms the timer for the overall timeout d and hooks the header
// timeout into ctx.
func (b *body) start(ctx context.Context, d, header time.Duration) context.Context {
	b.deadline = time.Now().Add(d)
	b.timer = time.AfterFunc(d, b.expire)
	if header <= 0 || header >= d {
		// The overall timeout fires first anyway.
		return ctx
	}
	b.headerTimeout = header
	b.trace.WroteRequest = b.wroteRequest
	return httptrace.WithClientTrace(ctx, &b.trace)
}

// sending marks the start of one round trip (the request or a redirect hop).
func (b *body) sending() {
	if b.headerTimeout == 0 {
		return
	}
	b.mu.Lock()
	b.awaiting = true
	b.mu.Unlock()
}

// wroteRequest starts the header timeout, as http.Transport's
// ResponseHeaderTimeout does: once the request is fully written. It runs on
// the transport's writer goroutine.
func (b *body) wroteRequest(info httptrace.WroteRequestInfo) {
	if info.Err != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// A late call after the headers arrived must not cut the body short.
	if !b.awaiting || b.headerArmed {
		return
	}
	if time.Until(b.deadline) > b.headerTimeout {
		b.headerArmed = true
		b.timer.Reset(b.headerTimeout)
	}
}

// headersIn ends the header timeout: the timer goes back to the overall
// deadline.
func (b *body) headersIn() {
	if b.headerTimeout == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.awaiting = false
	if b.headerArmed {
		b.headerArmed = false
		// A timer that already fired has cancelled the request; re-arming it
		// only cancels again.
		b.timer.Reset(time.Until(b.deadline))
	}
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
		b.err = &TooLargeError{Limit: b.limit, ContentLength: -1}
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
	return nil, wrapTimeout(err, &b.timedOut)
}

// release stops the timer and cancels the request's context.
func (b *body) release() {
	if b.headerTimeout != 0 {
		b.mu.Lock()
		b.awaiting = false // a late wroteRequest must not re-arm the timer
		b.mu.Unlock()
	}
	b.timer.Stop()
	b.cancel()
}
