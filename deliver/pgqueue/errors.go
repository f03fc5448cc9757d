package pgqueue

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// mapError is the one place driver errors become this package's: a missing
// table or column means the schema is behind (ErrNotMigrated); everything
// else is wrapped with the operation, keeping the driver's error for
// errors.As. Context errors pass through as they are.
func mapError(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "42P01", "42703": // undefined_table, undefined_column
			return fmt.Errorf("pgqueue: %s: %w (%s)", op, ErrNotMigrated, pe.Message)
		}
	}
	return fmt.Errorf("pgqueue: %s: %w", op, err)
}
