package client

import (
	"context"
	"net/http/httptrace"
	"testing"
	"testing/synctest"
	"time"
)

// TestRequestTimer drives the one per-request timer on synctest's clock:
// the header timeout counts from the write of each round trip, the overall
// timeout from the start, and a stopped timer never fires.
func TestRequestTimer(t *testing.T) {
	const overall, header = time.Second, 100 * time.Millisecond
	type step struct {
		at  time.Duration
		act string // send, wrote, headers, stop
	}
	for _, tc := range []struct {
		name   string
		steps  []step
		expire time.Duration // when the request is cancelled; 0 = never
	}{
		{"no headers after write", []step{{0, "send"}, {10 * time.Millisecond, "wrote"}}, 110 * time.Millisecond},
		{"slow connect then no headers", []step{{0, "send"}, {250 * time.Millisecond, "wrote"}}, 350 * time.Millisecond},
		{"headers in: body bounded by overall", []step{{0, "send"}, {10 * time.Millisecond, "wrote"}, {90 * time.Millisecond, "headers"}}, overall},
		{"redirect hop gets its own header timeout", []step{
			{0, "send"}, {10 * time.Millisecond, "wrote"}, {90 * time.Millisecond, "headers"},
			{90 * time.Millisecond, "send"}, {150 * time.Millisecond, "wrote"},
		}, 250 * time.Millisecond},
		{"never written: overall", []step{{0, "send"}}, overall},
		{"stopped", []step{{0, "send"}, {10 * time.Millisecond, "wrote"}, {50 * time.Millisecond, "stop"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				b := &body{cancel: cancel}
				begin := time.Now()
				var expiredAt time.Duration
				context.AfterFunc(ctx, func() { expiredAt = time.Since(begin) })
				if httptrace.ContextClientTrace(b.start(ctx, overall, header)) == nil {
					t.Fatal("no trace hook in the request's context")
				}
				for _, s := range tc.steps {
					time.Sleep(s.at - time.Since(begin))
					switch s.act {
					case "send":
						b.sending()
					case "wrote":
						b.wroteRequest(httptrace.WroteRequestInfo{})
					case "headers":
						b.headersIn()
					case "stop":
						b.stopTimer()
					}
				}
				time.Sleep(2 * overall)
				synctest.Wait()
				if tc.expire == 0 {
					if ctx.Err() != nil || b.timedOut.Load() {
						t.Fatal("stopped timer fired")
					}
					return
				}
				if !b.timedOut.Load() || expiredAt != tc.expire {
					t.Fatalf("expired at %v (timed out %v), want %v", expiredAt, b.timedOut.Load(), tc.expire)
				}
				if b.headerTimedOut.Load() != (tc.expire < overall) {
					t.Errorf("header timeout named as the cause: %v, want %v", b.headerTimedOut.Load(), tc.expire < overall)
				}
			})
		})
	}
}
