package deliver_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/deliver"
)

func TestDeliveryErrorMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		outcome deliver.AttemptOutcome
		want    string
	}{
		{deliver.AttemptFailed, `deliver: delivery to "https://b.example/inbox" failed: status 503: EOF`},
		{deliver.AttemptRefused, `deliver: delivery to "https://b.example/inbox" refused for good: status 503: EOF`},
		{deliver.AttemptHeld, `deliver: delivery to "https://b.example/inbox" held by the circuit breaker: status 503: EOF`},
	} {
		t.Run(tc.outcome.String(), func(t *testing.T) {
			err := error(&deliver.DeliveryError{Outcome: tc.outcome, Inbox: "https://b.example/inbox", StatusCode: 503, Err: io.EOF})
			if err.Error() != tc.want {
				t.Errorf("message %q, want %q", err, tc.want)
			}
			if !errors.Is(err, io.EOF) {
				t.Error("does not unwrap")
			}
			for _, s := range []error{deliver.ErrDeadline, deliver.ErrExhausted, deliver.ErrSkipped, deliver.ErrUnavailable} {
				if errors.Is(err, s) {
					t.Errorf("matches %v", s)
				}
			}
			if !strings.Contains(err.Error(), "503") {
				t.Errorf("message %q lacks the status", err)
			}
		})
	}
}
