package meta

import (
	"errors"
	"fmt"
)

// ErrDatabase marks every error of a database operation (errors.Is), so a
// caller tells "PostgreSQL failed" from everything else: the mirror answers
// those without their details, which belong in its log, not in a client's
// terminal.
var ErrDatabase = errors.New("the mirror's database failed")

// dbError is a failed database operation: its message says what was being
// done and what PostgreSQL said; it matches ErrDatabase.
type dbError struct{ err error }

func (e *dbError) Error() string   { return e.err.Error() }
func (e *dbError) Unwrap() []error { return []error{e.err, ErrDatabase} }

// dbErr is fmt.Errorf for a failed database operation.
func dbErr(format string, args ...any) error {
	return &dbError{fmt.Errorf(format, args...)}
}
