package delivertest_test

import (
	"context"
	"testing"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/delivertest"
	"github.com/fedkit/fedkit/deliver/driver"
)

func TestRecorderChainsExistingHooks(t *testing.T) {
	var rec delivertest.Recorder
	calls := 0
	cfg := &deliver.Config{OnSettled: func(context.Context, deliver.Settlement) { calls++ }}
	rec.Install(cfg)
	cfg.OnAttempt(context.Background(), deliver.Attempt{Inbox: "https://b.example/inbox", Outcome: deliver.AttemptDelivered})
	cfg.OnFailure(context.Background(), deliver.Failure{StatusCode: 410})
	cfg.OnSettled(context.Background(), deliver.Settlement{Result: driver.ResultDelivered})
	cfg.OnSettled(context.Background(), deliver.Settlement{Result: driver.ResultFailed})
	if calls != 2 {
		t.Fatalf("the application's OnSettled ran %d times, want 2", calls)
	}
	if len(rec.Attempts()) != 1 || rec.Failures()[0].StatusCode != 410 || len(rec.Settled()) != 2 {
		t.Fatalf("recorded %v / %v / %v", rec.Attempts(), rec.Failures(), rec.Settled())
	}
	if r := rec.Results(); r[driver.ResultDelivered] != 1 || r[driver.ResultFailed] != 1 {
		t.Fatalf("Results %v", r)
	}
}
