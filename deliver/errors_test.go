package deliver_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/fedkit/fedkit/deliver"
)

func TestDeliveryErrorKinds(t *testing.T) {
	t.Parallel()
	sentinels := map[deliver.Kind]error{
		deliver.KindRetryable: deliver.ErrRetryable, deliver.KindPermanent: deliver.ErrPermanent,
		deliver.KindHeld: deliver.ErrHeld, deliver.KindSkipped: deliver.ErrSkipped,
		deliver.KindDeadline: deliver.ErrDeadline, deliver.KindExhausted: deliver.ErrExhausted,
	}
	for kind, want := range sentinels {
		t.Run(kind.String(), func(t *testing.T) {
			err := error(&deliver.DeliveryError{Kind: kind, Inbox: "https://b.example/inbox", StatusCode: 503, Err: io.EOF})
			for k, s := range sentinels {
				if errors.Is(err, s) != (k == kind) {
					t.Errorf("errors.Is(%v, %v) = %v", kind, s, !(k == kind))
				}
			}
			if !errors.Is(err, want) || !errors.Is(err, io.EOF) {
				t.Error("does not match its sentinel or unwrap")
			}
			if !strings.Contains(err.Error(), "503") {
				t.Errorf("message %q lacks the status", err)
			}
			retry := kind == deliver.KindRetryable || kind == deliver.KindHeld
			if err.(*deliver.DeliveryError).Retryable() != retry {
				t.Errorf("Retryable() != %v", retry)
			}
		})
	}
}
