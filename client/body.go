package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// body caps a response body and releases the request's context on Close.
type body struct {
	rc       io.ReadCloser
	left     int64 // bytes still allowed; -1 means uncapped
	limit    int64
	err      error
	cancel   context.CancelFunc
	timer    *time.Timer // the request's overall timeout
	timedOut atomic.Bool
	closed   bool
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
	b.timer.Stop()
	b.cancel()
}
