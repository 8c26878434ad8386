// Package audithttp is the HTTP layer of pkg/audit: the middleware that
// records every change made through the operator console, and the route
// that reads the trail back.
package audithttp

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"

	"payments/pkg/audit"
	"payments/pkg/httpapi"
	"payments/pkg/metrics"
)

// DefaultLimit is the default page size of GET /admin/audit.
const DefaultLimit = 20

// maxAnswerRead is how much of an answer the Answered record keeps.
const maxAnswerRead = 64 << 10

// Errors are the answers to the errors of package audit: the rows of the
// catalogue of every function that links them (function.Catalogue joins
// them).
var Errors = httpapi.Catalogue{
	{Err: audit.ErrUnavailable, Status: http.StatusServiceUnavailable, Code: "CHANGE_NOT_AUDITED", Message: "the change could not be recorded in the audit trail, so it was not made: retry shortly", RetryAfter: 1},
}

// Recorded returns the middleware that records, in trail, every request
// of the console's to a route of another method than GET or HEAD: a
// Requested record before the route runs, and an Answered record with its
// status and answer once it has. When the first cannot be written the
// route does not run (503 CHANGE_NOT_AUDITED): no change is made that the
// trail does not hold. When the second cannot be written the change is
// made; the failure is logged and counted (metrics.AuditFailures).
// Secrets in the request or the answer are withheld (audit.Withhold).
func Recorded(trail *audit.Trail) httpapi.Middleware {
	return func(route httpapi.Route, next http.Handler) httpapi.HandlerFunc {
		method, _, _ := strings.Cut(route.Pattern(), " ")
		if method == http.MethodGet || method == http.MethodHead {
			return nil
		}
		wildcards := wildcardsOf(route.Pattern())
		return func(w http.ResponseWriter, r *http.Request) error {
			body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, route.MaxBody()))
			if err != nil {
				return err // an *http.MaxBytesError: 413 BODY_TOO_LARGE
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			rec := audit.Record{
				RequestID: httpapi.RequestID(r), Phase: audit.Requested, Operator: httpapi.Operator(r.Context()),
				Action: route.Pattern(), Targets: map[string]string{}, Request: audit.Withhold(body),
				SourceIP: httpapi.SourceIP(r), UserAgent: r.UserAgent(),
			}
			for _, name := range wildcards {
				rec.Targets[name] = r.PathValue(name)
			}
			rec.CompanyID = companyOf(route.Pattern(), rec.Targets, body, nil)
			if err := trail.Record(r.Context(), rec); err != nil {
				slog.ErrorContext(r.Context(), "change refused: its audit record could not be written", "route", route.Pattern(), "error", err)
				metrics.Count(r.Context(), metrics.AuditFailures)
				return err
			}
			answer := httpapi.NewAnswerRecorder(w, maxAnswerRead)
			next.ServeHTTP(answer, r)
			rec.Phase, rec.Status, rec.Request = audit.Answered, answer.Status(), nil
			rec.Answer = audit.Withhold(answer.Body())
			if rec.CompanyID == "" {
				rec.CompanyID = companyOf(route.Pattern(), rec.Targets, nil, answer.Body())
			}
			if err := trail.Record(r.Context(), rec); err != nil {
				slog.ErrorContext(r.Context(), "the answer of a change was not recorded in the audit trail", "route", route.Pattern(),
					"request_id", rec.RequestID, "status", rec.Status, "error", err)
				metrics.Count(r.Context(), metrics.AuditFailures)
			}
			return nil
		}
	}
}

// wildcardsOf returns the names of pattern's wildcards, in order.
func wildcardsOf(pattern string) []string {
	var names []string
	for rest := pattern; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return names
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return names
		}
		names = append(names, strings.TrimSuffix(rest[i+1:i+j], "..."))
		rest = rest[i+j+1:]
	}
}

// companyOf returns the company a change concerns: the id of a company's
// route (/admin/companies/{id}…) or of the company its answer creates
// (POST /admin/companies), else the company_id of the request's body, of
// the answer's data or of one of its data's objects (a credit's wallet),
// else "".
func companyOf(pattern string, targets map[string]string, request, answer []byte) string {
	if strings.Contains(pattern, "/admin/companies/{id}") {
		return targets["id"]
	}
	var req map[string]any
	if json.Unmarshal(request, &req) == nil {
		if id, ok := req["company_id"].(string); ok {
			return id
		}
	}
	var ans struct {
		Data map[string]any `json:"data"`
	}
	if json.Unmarshal(answer, &ans) != nil {
		return ""
	}
	if pattern == "POST /admin/companies" {
		id, _ := ans.Data["id"].(string)
		return id
	}
	if id, ok := ans.Data["company_id"].(string); ok {
		return id
	}
	for _, k := range slices.Sorted(maps.Keys(ans.Data)) {
		if member, ok := ans.Data[k].(map[string]any); ok {
			if id, ok := member["company_id"].(string); ok {
				return id
			}
		}
	}
	return ""
}

// RecordView is an audit record as GET /admin/audit answers it.
type RecordView struct {
	ID        string            `json:"id"`
	At        string            `json:"at"`
	RequestID string            `json:"request_id"`
	Phase     string            `json:"phase"`
	Operator  string            `json:"operator"`
	Action    string            `json:"action"`
	Targets   map[string]string `json:"targets"`
	CompanyID *string           `json:"company_id"`
	Request   json.RawMessage   `json:"request"`
	Answer    json.RawMessage   `json:"answer"`
	Status    *int              `json:"status"`
	SourceIP  string            `json:"source_ip"`
	UserAgent string            `json:"user_agent"`
}

func recordView(r audit.Record) RecordView {
	v := RecordView{
		ID: r.ID, At: r.At.UTC().Format("2006-01-02T15:04:05.000Z07:00"), RequestID: r.RequestID, Phase: r.Phase,
		Operator: r.Operator, Action: r.Action, Targets: r.Targets, Request: r.Request, Answer: r.Answer,
		SourceIP: r.SourceIP, UserAgent: r.UserAgent,
	}
	if v.Targets == nil {
		v.Targets = map[string]string{}
	}
	if r.CompanyID != "" {
		v.CompanyID = &r.CompanyID
	}
	if r.Status != 0 {
		v.Status = &r.Status
	}
	if v.Request == nil {
		v.Request = json.RawMessage("null")
	}
	if v.Answer == nil {
		v.Answer = json.RawMessage("null")
	}
	return v
}

// AdminRoutes registers the route that reads the trail (the router's
// guard must admit operators only):
//
//	GET /admin/audit   the records, newest first: operator, company_id, action, from, to
func AdminRoutes(rt *httpapi.Router, trail *audit.Trail) {
	rt.Handle("GET /admin/audit", func(w http.ResponseWriter, r *http.Request) error {
		p, err := httpapi.ParsePage(r, DefaultLimit)
		if err != nil {
			return err
		}
		q := r.URL.Query()
		f := audit.Filter{Operator: q.Get("operator"), CompanyID: q.Get("company_id"), Action: q.Get("action")}
		if f.From, f.To, err = httpapi.ParseDates(r, "from", "to"); err != nil {
			return err
		}
		res, err := trail.List(r.Context(), f, p)
		if err != nil {
			return err
		}
		out := make([]RecordView, len(res.Items))
		for i, rec := range res.Items {
			out[i] = recordView(rec)
		}
		httpapi.RespondList(w, out, httpapi.Pagination(r, p, res.Total, res.Next))
		return nil
	})
}
