// Package httpapi holds what every HTTP function shares: the response
// envelope of the spec, the error body and its catalogue, pagination, strict
// JSON decoding with a size cap, the router with its guard, and request logs.
package httpapi

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"
)

// BasePath is the version segment every public path starts with.
const BasePath = "/api/v1"

// MaxLimit is the largest page size a list accepts; larger is a 400.
const MaxLimit = 100

// MaxPage is the largest page number a list accepts; larger is a 400.
const MaxPage = 100_000

// Envelope is the spec's wrapper around a response payload (§2.1).
type Envelope struct {
	Success    bool   `json:"success"`
	StatusCode int    `json:"statusCode"`
	Message    string `json:"message"`
	Data       any    `json:"data"`
	Meta       *Page  `json:"meta,omitempty"`
	Pagination *Page  `json:"pagination,omitempty"`
}

// Page is the pagination object of §2.9. Page is 1-indexed unless a route
// documents otherwise.
type Page struct {
	Page       int `json:"page"`
	Limit      int `json:"limit"`
	Total      int `json:"total"`
	TotalPages int `json:"totalPages"`
}

// Offset returns the index of the first item of the page (1-indexed pages).
func (p Page) Offset() int { return (p.Page - 1) * p.Limit }

// WithTotal returns p with Total and TotalPages set from total.
func (p Page) WithTotal(total int) Page {
	p.Total = total
	p.TotalPages = int(math.Ceil(float64(total) / float64(p.Limit)))
	return p
}

// Slice returns the items of page p from all, and p with its totals set.
func Slice[T any](all []T, p Page) ([]T, Page) {
	p = p.WithTotal(len(all))
	start := min(p.Offset(), len(all))
	end := min(start+p.Limit, len(all))
	return all[start:end], p
}

// ParsePage reads the page and limit query parameters: page defaults to 1
// and may not exceed MaxPage, limit defaults to defaultLimit and may not
// exceed MaxLimit.
func ParsePage(r *http.Request, defaultLimit int) (Page, error) {
	p := Page{Page: 1, Limit: defaultLimit}
	q := r.URL.Query()
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPage {
			return p, Invalid("page", fmt.Sprintf("must be an integer from 1 to %d", MaxPage))
		}
		p.Page = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxLimit {
			return p, Invalid("limit", fmt.Sprintf("must be an integer from 1 to %d", MaxLimit))
		}
		p.Limit = n
	}
	return p, nil
}

// ParseBool reads an optional boolean query parameter.
func ParseBool(r *http.Request, name string, def bool) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, Invalid(name, "must be true or false")
	}
	return b, nil
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
// query parameters: RFC 3339 date-times or YYYY-MM-DD dates (midnight UTC),
// each optional, to_date after from_date. Absent bounds are zero times.
func ParseDateRange(r *http.Request) (from, to time.Time, err error) {
	q := r.URL.Query()
	if from, err = parseDate(q.Get("from_date"), "from_date"); err != nil {
		return from, to, err
	}
	if to, err = parseDate(q.Get("to_date"), "to_date"); err != nil {
		return from, to, err
	}
	if !from.IsZero() && !to.IsZero() && !to.After(from) {
		return from, to, Invalid("to_date", "must be after from_date")
	}
	return from, to, nil
}

func parseDate(s, field string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t, err = time.Parse(time.DateOnly, s)
	}
	if err != nil {
		return time.Time{}, Invalid(field, "must be an ISO 8601 date-time (RFC 3339) or a YYYY-MM-DD date")
	}
	if t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}, Invalid(field, "must be between the years 1970 and 9999")
	}
	return t.UTC(), nil
}
