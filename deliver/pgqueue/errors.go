package pgqueue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/fedkit/fedkit/deliver/driver"
)

// mapError is the one place driver errors become this package's: a missing
// table or column means the schema is behind (ErrNotMigrated); a database
// that cannot be reached, is shutting down or starting up, or dropped the
// connection, is driver.ErrQueueUnavailable (nothing was stored, the call
// may be retried); everything else is wrapped with the operation. The
// pgx error is kept for errors.As. Context errors pass through as they
// are.
func mapError(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "42P01", pe.Code == "42703": // undefined_table, undefined_column
			return fmt.Errorf("pgqueue: %s: %w (%s)", op, ErrNotMigrated, pe.Message)
		case unavailableCode(pe.Code):
			return fmt.Errorf("pgqueue: %s: %w: %w", op, driver.ErrQueueUnavailable, err)
		}
		return fmt.Errorf("pgqueue: %s: %w", op, err)
	}
	if unreachable(err) {
		return fmt.Errorf("pgqueue: %s: %w: %w", op, driver.ErrQueueUnavailable, err)
	}
	return fmt.Errorf("pgqueue: %s: %w", op, err)
}

// unavailableCode reports SQLSTATEs of a server that is not taking work
// for now: class 08 (connection exception), admin_shutdown (a fast
// shutdown), crash_shutdown (a backend crashed, every session ends),
// cannot_connect_now (starting up, recovering) and too_many_connections.
func unavailableCode(code string) bool {
	switch code {
	case "57P01", "57P02", "57P03", "53300":
		return true
	}
	return strings.HasPrefix(code, "08")
}

// unreachable reports errors of a connection that could not be made or was
// lost: a refused or reset dial, a server gone mid-statement (EOF), a
// statement the driver never sent (SafeToRetry).
func unreachable(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		pgconn.SafeToRetry(err):
		return true
	}
	return false
}
