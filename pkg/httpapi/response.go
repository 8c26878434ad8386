// Package httpapi holds what every HTTP function shares: the response
// envelope of the spec, the error body and its catalogue, pagination, strict
// JSON decoding with a size cap, the router with its guard, and request logs.
package httpapi

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"payments/pkg/field"
)

// BasePath is the version segment every public path starts with.
const BasePath = "/api/v1"

// Envelope is the spec's wrapper around a response payload (§2.1).
type Envelope struct {
	Success    bool   `json:"success"`
	StatusCode int    `json:"statusCode"`
	Message    string `json:"message"`
	Data       any    `json:"data"`
	Meta       *Page  `json:"meta,omitempty"`
	Pagination *Page  `json:"pagination,omitempty"`
}

// ParseBool reads an optional boolean query parameter, the one parser of
// them all: exactly true or false; absent, def. Anything else is a 400
// naming it, an empty value too (?sync= or ?sync): a boolean given says
// which.
func ParseBool(r *http.Request, name string, def bool) (bool, error) {
	q := r.URL.Query()
	if !q.Has(name) {
		return def, nil
	}
	switch q.Get(name) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return def, field.Invalid(name, "must be true or false")
}

// Write sends v as JSON with status, unwrapped.
func Write(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		slog.Error("encode response", "error", err)
		status = http.StatusInternalServerError
		body = []byte(`{"success":false,"statusCode":500,"message":"internal error","error":"Internal Server Error","code":"INTERNAL"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// Respond sends data in the envelope with status and message.
func Respond(w http.ResponseWriter, status int, message string, data any) {
	Write(w, status, Envelope{Success: true, StatusCode: status, Message: message, Data: data})
}

// RespondList sends a page of items in the envelope, with the pagination
// object under both meta and pagination (clients were shown both).
func RespondList[T any](w http.ResponseWriter, items []T, p Page) {
	if items == nil {
		items = []T{}
	}
	Write(w, http.StatusOK, Envelope{
		Success:    true,
		StatusCode: http.StatusOK,
		Message:    fmt.Sprintf("%d items retrieved successfully", len(items)),
		Data:       items,
		Meta:       &p,
		Pagination: &p,
	})
}

// ParseDateRange reads the from_date (inclusive) and to_date (exclusive)
// query parameters with ParseDates.
func ParseDateRange(r *http.Request) (from, to time.Time, err error) {
	return ParseDates(r, "from_date", "to_date")
}

// ParseDates reads the query parameters named fromName (inclusive) and
// toName (exclusive), the one date rule of every list: RFC 3339 date-times
// or YYYY-MM-DD dates (midnight UTC), each optional, to after from. Absent
// bounds are zero times; a bad one is a 400 naming its parameter.
func ParseDates(r *http.Request, fromName, toName string) (from, to time.Time, err error) {
	q := r.URL.Query()
	if from, err = parseDate(q.Get(fromName), fromName); err != nil {
		return from, to, err
	}
	if to, err = parseDate(q.Get(toName), toName); err != nil {
		return from, to, err
	}
	if !from.IsZero() && !to.IsZero() && !to.After(from) {
		return from, to, field.Invalid(toName, "must be after "+fromName)
	}
	return from, to, nil
}

func parseDate(s, name string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t, err = time.Parse(time.DateOnly, s)
	}
	if err != nil {
		return time.Time{}, field.Invalid(name, "must be an ISO 8601 date-time (RFC 3339) or a YYYY-MM-DD date")
	}
	t = t.UTC()
	if t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}, field.Invalid(name, "must be between the years 1970 and 9999 (UTC)")
	}
	return t, nil
}
