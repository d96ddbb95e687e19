package engine

import (
	"errors"

	"certa/result"
	"certa/sqlerr"
)

// CopierError is the error of a COPY that the client's Copier failed: the
// client went away, or its data could not be asked for again (a statement
// run again after a conflict: 40001, for the client to run it again).
func CopierError(err error) error {
	if errors.Is(err, result.ErrCopyOnce) {
		return sqlerr.Wrap(err, sqlerr.SerializationFailure, "could not serialize access: %v", err)
	}
	return err
}
