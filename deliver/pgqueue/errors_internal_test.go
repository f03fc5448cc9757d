package pgqueue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fedkit/fedkit/deliver/driver"
)

// The errors a database outage produces map to driver.ErrQueueUnavailable,
// keeping the driver's error; a statement the server refused does not.
// The restart test (TestPostgresRestartMidFanout) sees the real ones.
func TestMapErrorUnavailable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		name        string
		err         error
		unavailable bool
		notMigrated bool
	}{
		{"dial refused", refused, true, false},
		{"eof mid-statement", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true, false},
		{"reset", fmt.Errorf("write: %w", syscall.ECONNRESET), true, false},
		{"admin_shutdown", &pgconn.PgError{Code: "57P01"}, true, false},
		{"crash_shutdown", &pgconn.PgError{Code: "57P02"}, true, false},
		{"starting up", &pgconn.PgError{Code: "57P03"}, true, false},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true, false},
		{"connection_failure", &pgconn.PgError{Code: "08006"}, true, false},
		{"unique_violation", &pgconn.PgError{Code: "23505"}, false, false},
		{"undefined_table", &pgconn.PgError{Code: "42P01"}, false, true},
		{"plain", errors.New("boom"), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mapError("claim", tc.err)
			if errors.Is(got, driver.ErrQueueUnavailable) != tc.unavailable {
				t.Fatalf("mapError(%v) = %v: ErrQueueUnavailable %v, want %v", tc.err, got, !tc.unavailable, tc.unavailable)
			}
			if errors.Is(got, ErrNotMigrated) != tc.notMigrated {
				t.Fatalf("mapError(%v) = %v: ErrNotMigrated %v, want %v", tc.err, got, !tc.notMigrated, tc.notMigrated)
			}
			if !tc.notMigrated && !errors.Is(got, tc.err) {
				t.Fatalf("mapError(%v) = %v lost the driver's error", tc.err, got)
			}
		})
	}
	if err := mapError("claim", context.Canceled); err != context.Canceled {
		t.Fatalf("context error wrapped: %v", err)
	}
}
