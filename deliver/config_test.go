package deliver_test

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/deliver"
)

// A Config built by hand, with only a hook set, keeps the circuit breaker
// DefaultConfig has: after BreakerThresholdDefault failures the host's
// deliveries are held.
func TestHandBuiltConfigKeepsBreaker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  func(b *bundle) *deliver.Config
	}{
		{"OnFailureOnly", func(b *bundle) *deliver.Config {
			return &deliver.Config{OnFailure: func(context.Context, deliver.Failure) {}, Now: b.clock.Now, Concurrency: 1}
		}},
		{"DefaultConfig", func(b *bundle) *deliver.Config {
			c := deliver.DefaultConfig()
			c.Now, c.Concurrency = b.clock.Now, 1
			return c
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, nil)
			cfg := tc.cfg(b)
			b.rec.Install(cfg)
			d, err := deliver.New(b.q, b.keys, testClient(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			b.d = d
			ib := newInbox(t, b.clock, status(503))
			for i := range deliver.BreakerThresholdDefault + 5 {
				b.send(t, strconv.Itoa(i), ib.URL(fmt.Sprintf("/%d", i)))
			}
			b.runDue(t)
			if n := len(ib.requests()); n != deliver.BreakerThresholdDefault {
				t.Fatalf("%d requests, want the breaker to hold after %d", n, deliver.BreakerThresholdDefault)
			}
		})
	}
}

func TestDisableBreaker(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *deliver.Config) { c.DisableBreaker = true; c.Concurrency = 1 })
	ib := newInbox(t, b.clock, status(503))
	for i := range 15 {
		b.send(t, strconv.Itoa(i), ib.URL(fmt.Sprintf("/%d", i)))
	}
	b.runDue(t)
	if n := len(ib.requests()); n != 15 {
		t.Fatalf("%d requests with the breaker off, want 15", n)
	}
}

func TestNewNilConfig(t *testing.T) {
	t.Parallel()
	d, err := deliver.New(&deliver.MemoryQueue{}, &keys{}, testClient(t), nil)
	if err != nil || d == nil {
		t.Fatalf("New(nil config) = %v, %v", d, err)
	}
}

// The "refused for good" line names the status, and the error a Failure
// carries reads as a failure.
func TestRefusedForGoodLogAndFailureText(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	b := setup(t, func(c *deliver.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&buf, nil))
	})
	ib := newInbox(t, b.clock, status(410))
	b.send(t, "1", ib.URL("/inbox"))
	b.runDue(t)
	var line string
	for l := range strings.SplitSeq(buf.String(), "\n") {
		if strings.Contains(l, "refused for good") {
			line = l
		}
	}
	if !strings.Contains(line, "status=410") || strings.Contains(line, "<nil>") {
		t.Errorf("log line %q: want the status and no <nil>", line)
	}
	f := b.rec.Failures()
	if len(f) != 1 {
		t.Fatalf("failures %+v", f)
	}
	msg := f[0].Err.Error()
	if !strings.Contains(msg, "refused") || !strings.Contains(msg, "410") || strings.Contains(msg, "permanent delivery") {
		t.Errorf("Failure error %q does not read as a refusal with its status", msg)
	}
}
