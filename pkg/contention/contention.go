// Package contention names the one error of a write that keeps losing its
// race with other writes, and the one policy by which such a write is
// tried again (Retry). It is its own package, without dependencies, so
// that the error catalogue every function links (pkg/function) names it,
// and the domain retries by it, without linking the DynamoDB client of
// pkg/store, which returns the error and retries by the same policy.
package contention

import "errors"

// ErrConflict reports a write that lost its race with other writes of the
// same items on every attempt the retry policy allowed. Nothing was written;
// the caller may try again later (the HTTP layer answers 409 with
// Retry-After).
var ErrConflict = errors.New("store: conflicting writes, retry later")
