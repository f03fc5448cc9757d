package ingest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fedkit/fedkit/identity"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want Outcome
		code string
	}{
		{"nil is done", nil, Done, ""},
		{"refresh unresolved", &identity.RefreshError{Class: identity.ClassUnresolved, Reason: identity.ReasonResolveFailed}, Unresolved, "resolve-failed"},
		{"refresh permanent", &identity.RefreshError{Class: identity.ClassPermanent, Reason: identity.ReasonSubjectMismatch}, Permanent, "subject-mismatch"},
		{"busy lock is deferred", &identity.RefreshError{Class: identity.ClassBusy, Deferred: true, Reason: identity.ReasonLockBusy}, Busy, "lock-busy"},
		{"live debounce is deferred", &identity.RefreshError{Class: identity.ClassUnresolved, Deferred: true, Reason: identity.ReasonDebounced}, Busy, "debounced"},
		{"wrapped refresh error", fmt.Errorf("ctx: %w", &identity.RefreshError{Class: identity.ClassPermanent, Reason: identity.ReasonInvalidDID}), Permanent, "invalid-did"},
		{"ingest permanent", permanent("malformed", errors.New("x")), Permanent, "malformed"},
		{"ingest unresolved", unresolved("origin-resolution-failed", nil), Unresolved, "origin-resolution-failed"},
		{"plain error is transient", errors.New("connection reset"), Transient, "error"},
		{"ingest transient", transient(identity.ReasonStoreFailed, errors.New("conn")), Transient, "store-failed"},
		{"library store failure keeps the library's class", &identity.RefreshError{Class: identity.ClassUnresolved, Reason: identity.ReasonStoreFailed}, Unresolved, "store-failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.err); got != tt.want {
				t.Errorf("Classify = %v, want %v", got, tt.want)
			}
			if got := Code(tt.err); got != tt.code {
				t.Errorf("Code = %q, want %q", got, tt.code)
			}
		})
	}
}

// The spec's in-line retry waits (3.4); tests elsewhere shorten them, so
// this is where the real values are held.
func TestInlineRetryDelaysDefault(t *testing.T) {
	t.Parallel()
	want := []time.Duration{200 * time.Millisecond, time.Second, 3 * time.Second}
	if got := InlineRetryDelaysDefault(); !slices.Equal(got, want) {
		t.Fatalf("InlineRetryDelaysDefault() = %v, want %v", got, want)
	}
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	in := &Ingester{cfg: Config{RedriveInterval: 5 * time.Minute, BusyDelay: 30 * time.Second}}
	tests := []struct {
		name string
		err  error
		want time.Duration
	}{
		{"busy lock comes back soon", &identity.RefreshError{Class: identity.ClassBusy, Deferred: true, Reason: identity.ReasonLockBusy}, 30 * time.Second},
		{"live debounce waits past the negative TTL", &identity.RefreshError{Class: identity.ClassUnresolved, Deferred: true, Reason: identity.ReasonDebounced}, 5 * time.Minute},
		{"unresolved", &identity.RefreshError{Class: identity.ClassUnresolved, Reason: identity.ReasonResolveFailed}, 5 * time.Minute},
		{"transient", transient(identity.ReasonStoreFailed, errors.New("conn")), 5 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := in.retryDelay(Classify(tt.err), tt.err); got != tt.want {
				t.Errorf("retryDelay = %s, want %s", got, tt.want)
			}
		})
	}
}
