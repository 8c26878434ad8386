// Package field names bad input: the error of one request field that a
// service returns and the HTTP layer answers as a 400 naming the field. It
// knows no HTTP, so the domain packages use it to validate what they are
// given (docs/architecture.md).
package field

// Error is bad input in one named field: 400 with a message that names it.
type Error struct {
	Field   string
	Problem string
}

// Error returns "field: problem".
func (e *Error) Error() string { return e.Field + ": " + e.Problem }

// Invalid returns an *Error for field name.
func Invalid(name, problem string) error { return &Error{Field: name, Problem: problem} }

// Fault is a catalogued error about one named field (a document URL that
// could not be fetched, a file too large): it answers the status, code and
// message of Err's catalogue entry, with the field named in the message and
// the body.
type Fault struct {
	Field string
	Err   error
}

// Error returns "field: " and Err's text.
func (e *Fault) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *Fault) Unwrap() error { return e.Err }

// On returns err attributed to field name.
func On(err error, name string) error { return &Fault{Field: name, Err: err} }
