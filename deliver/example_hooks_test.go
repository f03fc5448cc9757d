package deliver_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/fedkit/fedkit/deliver"
	"github.com/fedkit/fedkit/deliver/driver"
)

// OnAttempt sees every attempt; its Outcome says what became of it and its
// Err, a *DeliveryError, the details.
func ExampleAttempt() {
	cfg := deliver.DefaultConfig()
	cfg.OnAttempt = func(ctx context.Context, a deliver.Attempt) {
		var derr *deliver.DeliveryError
		switch {
		case a.Err == nil:
			// delivered: the application may clear the host's failure record
		case a.Outcome == deliver.AttemptHeld && errors.As(a.Err, &derr):
			log.Printf("%s held by its breaker until %v", a.Host, derr.Until)
		case a.Outcome == deliver.AttemptFailed && errors.As(a.Err, &derr):
			log.Printf("%s failed (status %d, Retry-After %v), attempt %d; will retry", a.Host, derr.StatusCode, derr.RetryAfter, a.Number)
		case a.Outcome == deliver.AttemptRefused:
			log.Printf("%s refused it for good (status %d)", a.Host, a.StatusCode)
		}
	}
	_ = cfg
}

// OnSettled sees each delivery once it is done with: its Result says how it
// ended and its Err why, down to the last attempt's status.
func ExampleSettlement() {
	cfg := deliver.DefaultConfig()
	cfg.OnSettled = func(ctx context.Context, s deliver.Settlement) {
		var derr *deliver.DeliveryError
		switch {
		case s.Result == driver.ResultDelivered:
		case s.Result == driver.ResultFailed && errors.As(s.Err, &derr):
			log.Printf("%s refused %s for good: status %d", s.Inbox, s.ActivityID, derr.StatusCode)
		case errors.Is(s.Err, deliver.ErrDeadline):
			log.Printf("%s: batch %q's deadline passed after %d attempts", s.Inbox, s.Tag, s.Attempts)
		case errors.Is(s.Err, deliver.ErrExhausted) && errors.As(s.Err, &derr):
			log.Printf("%s: gave up after %d attempts, last status %d", s.Inbox, s.Attempts, derr.StatusCode)
		case errors.Is(s.Err, deliver.ErrUnavailable):
			log.Printf("%s: skipped, its host is unavailable", s.Inbox)
		}
	}
	_ = cfg
}

// OnFailure sees each permanent refusal: a 410 says the inbox is gone, so
// the application stops addressing it.
func ExampleFailure() {
	cfg := deliver.DefaultConfig()
	cfg.OnFailure = func(ctx context.Context, f deliver.Failure) {
		if f.StatusCode == http.StatusGone {
			log.Printf("%s is gone: remove it from %s's followers", f.Inbox, f.ActorID)
		}
	}
	_ = cfg
}

// A DeliveryError carries what the caller acts on, and its message never
// quotes the remote's response body.
func ExampleDeliveryError() {
	err := error(&deliver.DeliveryError{Outcome: deliver.AttemptFailed, Inbox: "https://b.example/inbox",
		StatusCode: http.StatusServiceUnavailable, RetryAfter: 2 * time.Minute})
	var derr *deliver.DeliveryError
	if errors.As(err, &derr) {
		fmt.Println(derr.Outcome, derr.StatusCode, derr.RetryAfter)
	}
	fmt.Println(err)
	// Output:
	// failed 503 2m0s
	// deliver: delivery to "https://b.example/inbox" failed: status 503
}
