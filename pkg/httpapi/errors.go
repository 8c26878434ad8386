package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"

	"payments/pkg/field"
)

// ErrUnauthorized is a missing, malformed, expired or otherwise unusable
// credential. Its message is the same whatever the cause.
var ErrUnauthorized = errors.New("httpapi: unauthorized")

// ErrRouteNotFound is a path no route serves.
var ErrRouteNotFound = errors.New("httpapi: route not found")

// ErrMethodNotAllowed is a known path called with the wrong method.
var ErrMethodNotAllowed = errors.New("httpapi: method not allowed")

// ErrUnsupportedMediaType is a body that is not JSON where JSON is required.
var ErrUnsupportedMediaType = errors.New("httpapi: unsupported media type")

// ErrMalformedRequest is an event that makes no HTTP request: a URL that
// does not parse, a base64 body that does not decode.
var ErrMalformedRequest = errors.New("httpapi: malformed request")

// ErrorBody is the error response of DESIGN §7: the spec's statusCode,
// message and error, plus success false, a stable code and, for bad input,
// the field at fault; Data, when the request committed something before it
// could not finish, is what it committed (WithData).
type ErrorBody struct {
	Success    bool   `json:"success"`
	StatusCode int    `json:"statusCode"`
	Message    string `json:"message"`
	Error      string `json:"error"`
	Code       string `json:"code"`
	Field      string `json:"field,omitempty"`
	Data       any    `json:"data,omitempty"`
}

// DataError is an error answered with Data beside it (WithData).
type DataError struct {
	Err  error
	Data any
}

// Error returns Err's text.
func (e *DataError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *DataError) Unwrap() error { return e.Err }

// WithData returns err answered as the catalogue answers it, with data as
// the body's data: what the request committed before err stopped it (a
// card funding accepted, its issuer not answering in time), so that the
// client learns of it rather than sending the request again.
func WithData(err error, data any) error { return &DataError{Err: err, Data: data} }

// ErrorEntry maps one sentinel error to its status, stable code and the
// message clients see; RetryAfter, when not 0, is sent as the Retry-After
// header (seconds). An entry matches the errors that are Err (errors.Is)
// or, when Is is set instead, the errors Is reports.
type ErrorEntry struct {
	Err        error
	Is         func(error) bool
	Status     int
	Code       string
	Message    string
	RetryAfter int
}

// Catalogue maps errors to responses. Entries are tried in order; the
// first match wins. Errors this package defines are mapped
// after the entries; anything else is a 500 that reveals nothing.
type Catalogue []ErrorEntry

// builtin maps the errors this package raises itself.
var builtin = Catalogue{
	{Err: ErrUnauthorized, Status: http.StatusUnauthorized, Code: "UNAUTHORIZED", Message: "unauthorized"},
	{Err: ErrRouteNotFound, Status: http.StatusNotFound, Code: "ROUTE_NOT_FOUND", Message: "no such route: see GET /api/v1/openapi.json"},
	{Err: ErrMethodNotAllowed, Status: http.StatusMethodNotAllowed, Code: "METHOD_NOT_ALLOWED", Message: "method not allowed"},
	{Err: ErrUnsupportedMediaType, Status: http.StatusUnsupportedMediaType, Code: "UNSUPPORTED_MEDIA_TYPE", Message: "Content-Type must be application/json"},
	{Err: ErrMalformedRequest, Status: http.StatusBadRequest, Code: "MALFORMED_REQUEST", Message: "malformed request: the URL or the body cannot be read"},
}

// Body returns the error body for err and whether err was known. An unknown
// error gives a 500 body with a fixed message.
func (c Catalogue) Body(err error) (ErrorBody, bool) {
	body, _, known := c.lookup(err)
	return body, known
}

// lookup returns the error body for err, its Retry-After seconds and
// whether err was known.
func (c Catalogue) lookup(err error) (ErrorBody, int, bool) {
	var fe *field.Error
	if errors.As(err, &fe) {
		return newBody(http.StatusBadRequest, "INVALID_FIELD", fe.Error(), fe.Field), 0, true
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		msg := fmt.Sprintf("body: larger than %d bytes", tooLarge.Limit)
		return newBody(http.StatusRequestEntityTooLarge, "BODY_TOO_LARGE", msg, "body"), 0, true
	}
	for _, list := range []Catalogue{c, builtin} {
		for _, e := range list {
			if (e.Is != nil && e.Is(err)) || (e.Err != nil && errors.Is(err, e.Err)) {
				var ff *field.Fault
				if errors.As(err, &ff) {
					return newBody(e.Status, e.Code, ff.Field+": "+e.Message, ff.Field), e.RetryAfter, true
				}
				return newBody(e.Status, e.Code, e.Message, ""), e.RetryAfter, true
			}
		}
	}
	return newBody(http.StatusInternalServerError, "INTERNAL", "internal error", ""), 0, false
}

// Codes returns every code an error body can carry with c, sorted: c's,
// this package's, INVALID_FIELD, BODY_TOO_LARGE and INTERNAL.
func (c Catalogue) Codes() []string {
	codes := []string{"INVALID_FIELD", "BODY_TOO_LARGE", "INTERNAL"}
	for _, list := range []Catalogue{c, builtin} {
		for _, e := range list {
			codes = append(codes, e.Code)
		}
	}
	slices.Sort(codes)
	return slices.Compact(codes)
}

func newBody(status int, code, message, field string) ErrorBody {
	return ErrorBody{StatusCode: status, Message: message, Error: http.StatusText(status), Code: code, Field: field}
}

// WriteError sends the catalogued body for err. An unknown error is logged
// with its text, which never reaches the client.
func (c Catalogue) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	body, retryAfter, known := c.lookup(err)
	var wait interface{ RetryAfterSeconds() int } // a limit's own wait
	if known && errors.As(err, &wait) {
		retryAfter = wait.RetryAfterSeconds()
	}
	if d := (*DataError)(nil); known && errors.As(err, &d) {
		body.Data = d.Data
	}
	if !known {
		slog.ErrorContext(r.Context(), "unhandled error", "error", err, "route", r.Pattern)
	}
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	Write(w, body.StatusCode, body)
}
