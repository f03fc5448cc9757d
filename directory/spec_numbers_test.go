package directory_test

import (
	"testing"
	"time"

	"github.com/fedkit/fedkit/client"
	"github.com/fedkit/fedkit/directory"
)

// TestSpecNumbers pins every number the seed and spec make a requirement,
// so a constant cannot drift while the tests that use it drift along.
func TestSpecNumbers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"at most eight Directories", directory.MaxDirectories, 8},
		{"three attempts", directory.MaxAttemptsDefault, 3},
		{"interactive backoff 250 ms", directory.BackoffDefault, 250 * time.Millisecond},
		{"interactive Retry-After up to 30 s", directory.MaxRetryWaitDefault, 30 * time.Second},
		{"manual commands wait for the lease as long", directory.ManualLeaseWaitDefault, 30 * time.Second},
		{"Retry-After capped at 24 h", directory.MaxRetryAfter, 24 * time.Hour},
		{"scheduler Retry-After cap 24 h", directory.RetryAfterCap, 24 * time.Hour},
		{"15 s overall deadline", directory.TimeoutDefault, 15 * time.Second},
		{"16 KiB body", directory.MaxResponseBytes, 16384},
		{"telemetry 0..10,000,000", directory.MaxParticipatingInstances, 10_000_000},
		{"expires = created + 300 s", directory.SignatureLifetime, 300 * time.Second},
		{"signature label", directory.SignatureLabel, "directory"},
		{"status route", directory.StatusPath, "/v1/status"},
		{"heartbeat every 24 h", directory.HeartbeatInterval, 24 * time.Hour},
		{"jitter at most 2 h", directory.HeartbeatJitterMax, 2 * time.Hour},
		{"backoff from 30 s", directory.BackoffBase, 30 * time.Second},
		{"local backoff cap 15 min", directory.BackoffCap, 15 * time.Minute},
		{"wake at least once a minute", directory.ObserveIntervalDefault, time.Minute},
		{"one-minute lease", directory.LeaseTTLDefault, time.Minute},
		{"renewed every 20 s", directory.LeaseRenewDefault, 20 * time.Second},
		{"state expires after 90 days", directory.StateRetentionDefault, 90 * 24 * time.Hour},
		{"profile string bytes", directory.MaxProfileStringBytes, 256},
		{"profile email bytes", directory.MaxProfileEmailBytes, 320},
		{"profile notes bytes", directory.MaxProfileNotesBytes, 1024},
		{"profile list items", directory.MaxProfileListItems, 16},
		{"profile list item bytes", directory.MaxProfileItemBytes, 128},
		{"profile canonical JSON bytes", directory.MaxProfileJSONBytes, 4096},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	// The transport's timeouts are pinned in TestTransportTimeouts.
	cc := directory.ClientConfig()
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"transport: no redirects", cc.MaxRedirects, client.NoRedirects},
		{"transport: 16 KiB body", cc.MaxBodyBytes, int64(16384)},
		{"transport: 64 KiB headers", cc.MaxResponseHeaderBytes, int64(64 << 10)},
		{"transport: 15 s overall", cc.Timeout, 15 * time.Second},
		{"transport: two connections per host", cc.MaxConnsPerHost, 2},
		{"transport: compression off", cc.DisableCompression, true},
		{"transport: private ranges allowed for split DNS", cc.Policy, client.PolicyNonLocal},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
