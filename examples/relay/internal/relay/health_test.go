package relay

import (
	"context"
	"testing"
	"time"

	"github.com/fedkit/fedkit/deliver"
)

func TestHealth(t *testing.T) {
	ctx := context.Background()
	fail := deliver.Attempt{Host: "x.example", Inbox: "https://x.example/inbox", Outcome: deliver.AttemptFailed, StatusCode: 503,
		Err: &deliver.DeliveryError{Outcome: deliver.AttemptFailed, StatusCode: 503}}
	until := time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC)
	held := deliver.Attempt{Host: "x.example", Outcome: deliver.AttemptHeld, Err: &deliver.DeliveryError{Outcome: deliver.AttemptHeld, Until: until}}
	ok := deliver.Attempt{Host: "x.example", Outcome: deliver.AttemptDelivered}
	probeFail := fail
	probeFail.Probe = true
	steps := []struct {
		name        string
		a           deliver.Attempt
		wantBreaker string
		wantFails   int
	}{
		{"first failure", fail, BreakerClosed, 1},
		{"second failure", fail, BreakerClosed, 2},
		{"threshold", fail, BreakerOpen, 3},
		{"held", held, BreakerOpen, 3},
		{"probe fails", probeFail, BreakerOpen, 4},
		{"delivered", ok, BreakerClosed, 0},
	}
	h := NewHealth(3)
	for _, s := range steps {
		h.OnAttempt(ctx, s.a)
		hosts, _ := h.Snapshot()
		if len(hosts) != 1 || hosts[0].Breaker != s.wantBreaker || hosts[0].ConsecutiveFailures != s.wantFails {
			t.Fatalf("%s: %+v; want %s with %d failures", s.name, hosts, s.wantBreaker, s.wantFails)
		}
	}
	hosts, recent := h.Snapshot()
	if hosts[0].Delivered != 1 || hosts[0].Failed != 4 || hosts[0].Held != 1 {
		t.Errorf("counts = %+v", hosts[0])
	}
	if len(hosts[0].Recent) != RecentFailuresPerHost || len(recent) != 5 || recent[0].Kind != "failed" || recent[1].Kind != "held" {
		t.Errorf("recent: host %d, all %+v", len(hosts[0].Recent), recent)
	}
}

func TestHealthOrderAndBounds(t *testing.T) {
	ctx := context.Background()
	h := NewHealth(1)
	h.OnAttempt(ctx, deliver.Attempt{Host: "ok.example", Outcome: deliver.AttemptDelivered})
	for range RecentFailures + 10 {
		h.OnAttempt(ctx, deliver.Attempt{Host: "bad.example", Outcome: deliver.AttemptFailed})
	}
	hosts, recent := h.Snapshot()
	if hosts[0].Host != "bad.example" || hosts[1].Host != "ok.example" {
		t.Errorf("order = %s, %s; want the open breaker first", hosts[0].Host, hosts[1].Host)
	}
	if len(recent) != RecentFailures {
		t.Errorf("%d recent failures kept; want %d", len(recent), RecentFailures)
	}
}

func TestHealthEmptySnapshot(t *testing.T) {
	hosts, recent := NewHealth(0).Snapshot()
	if hosts == nil || recent == nil {
		t.Fatal("nil slices would be null in the status JSON")
	}
}
