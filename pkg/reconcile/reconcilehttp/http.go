// Package reconcilehttp is the HTTP layer of pkg/reconcile: its routes, which read the
// request, call the service and answer, and the wire types its answers are
// made of, converted from the domain's.
package reconcilehttp

import (
	"encoding/json"
	"net/http"
	"time"

	"payments/pkg/field"
	"payments/pkg/httpapi"
	"payments/pkg/money"
	"payments/pkg/reconcile"
	"payments/pkg/timestamp"
)

// DefaultLimit is the default page size of GET /admin/reconciliations.
const DefaultLimit = 20

// runBody is the body of POST /admin/reconciliations: the provider, or
// none for both, and where to start a new run's window, or none for where
// the last completed run ended.
type runBody struct {
	Provider string `json:"provider"`
	From     string `json:"from"`
}

// AdminRoutes registers the operator console's reconciliation routes (the
// router's guard must admit operators only):
//
//	POST /admin/reconciliations        run now, {"provider": "issuer" | "operator", "from": date-time}, or both
//	GET  /admin/reconciliations        the reports, newest first
//	GET  /admin/reconciliations/{id}   one report
func AdminRoutes(rt *httpapi.Router, svc *reconcile.Service) {
	rt.Handle("POST /admin/reconciliations", func(w http.ResponseWriter, r *http.Request) error {
		var body runBody
		if err := httpapi.DecodeOptional(r, &body); err != nil {
			return err
		}
		ps, err := reconcile.ParseProvider(body.Provider)
		if err != nil {
			return err
		}
		var from time.Time
		if body.From != "" {
			if from, err = time.Parse(time.RFC3339Nano, body.From); err != nil {
				return field.Invalid("from", "must be an RFC 3339 date-time")
			}
			from = timestamp.Of(from)
		}
		reports, err := svc.Run(r.Context(), ps, from)
		if err != nil {
			return err
		}
		out := make([]ReportView, len(reports))
		for i, rep := range reports {
			out[i] = reportView(rep)
		}
		httpapi.Respond(w, http.StatusCreated, "Reconciliation run", out)
		return nil
	})
	rt.Handle("GET /admin/reconciliations", func(w http.ResponseWriter, r *http.Request) error {
		p, err := httpapi.ParsePage(r, DefaultLimit)
		if err != nil {
			return err
		}
		res, err := svc.List(r.Context(), p)
		if err != nil {
			return err
		}
		out := make([]ReportView, len(res.Items))
		for i, rep := range res.Items {
			out[i] = reportView(rep)
		}
		httpapi.RespondList(w, out, httpapi.Pagination(r, p, res.Total, res.Next))
		return nil
	})
	rt.Handle("GET /admin/reconciliations/{id}", func(w http.ResponseWriter, r *http.Request) error {
		rep, err := svc.Get(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		httpapi.Respond(w, http.StatusOK, "Reconciliation", reportView(rep))
		return nil
	})
}

// ReportView is a report as the console shows it (docs/openapi.yaml,
// Reconciliation): amounts in major units of their currency.
type ReportView struct {
	ID            string             `json:"id"`
	Provider      reconcile.Provider `json:"provider"`
	Status        reconcile.Status   `json:"status"`
	Window        WindowView         `json:"window"`
	Matched       int                `json:"matched"`
	Recovered     int                `json:"recovered"`
	MismatchCount int                `json:"mismatch_count"`
	Mismatches    []MismatchView     `json:"mismatches"`
	Balances      []BalanceView      `json:"balances"`
	// Phase is where a RUNNING run stands; Error why a FAILED one stopped.
	Phase      *string `json:"phase"`
	Error      *string `json:"error"`
	StartedAt  string  `json:"started_at"`
	FinishedAt *string `json:"finished_at"`
}

// WindowView is a report's window.
type WindowView struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// MismatchView is a mismatch as the console shows it.
type MismatchView struct {
	Kind           reconcile.Kind `json:"kind"`
	Subject        string         `json:"subject"`
	ProviderID     *string        `json:"provider_id"`
	CompanyID      *string        `json:"company_id"`
	Reference      *string        `json:"reference"`
	TransactionID  *string        `json:"transaction_id"`
	Currency       *string        `json:"currency"`
	ProviderAmount *json.Number   `json:"provider_amount"`
	OurAmount      *json.Number   `json:"our_amount"`
	ProviderStatus *string        `json:"provider_status"`
	OurStatus      *string        `json:"our_status"`
	Detail         string         `json:"detail"`
}

// BalanceView is a provider's balance as the console shows it.
type BalanceView struct {
	Country        *string      `json:"country"`
	Currency       string       `json:"currency"`
	ProviderAmount json.Number  `json:"provider_amount"`
	OurAmount      *json.Number `json:"our_amount"`
}

// reportView returns r as the console shows it.
func reportView(r reconcile.Report) ReportView {
	v := ReportView{ID: r.ID, Provider: r.Provider, Status: r.Status,
		Window:  WindowView{From: timestamp.Format(r.Window.From), To: timestamp.Format(r.Window.To)},
		Matched: r.Matched, Recovered: r.Recovered, MismatchCount: r.MismatchCount,
		Mismatches: []MismatchView{}, Balances: []BalanceView{}, StartedAt: timestamp.Format(r.StartedAt)}
	if r.Status == reconcile.Running {
		v.Phase = optional(r.Progress.Phase)
	}
	v.Error = optional(r.Error)
	if r.FinishedAt != nil {
		v.FinishedAt = optional(timestamp.Format(*r.FinishedAt))
	}
	for _, m := range r.Mismatches {
		v.Mismatches = append(v.Mismatches, MismatchView{Kind: m.Kind, Subject: m.Subject, ProviderID: optional(m.ProviderID),
			CompanyID: optional(m.CompanyID), Reference: optional(m.Reference), TransactionID: optional(m.TransactionID),
			Currency: optional(m.Currency), ProviderAmount: major(m.ProviderAmount, m.Currency), OurAmount: major(m.OurAmount, m.Currency),
			ProviderStatus: optional(m.ProviderStatus), OurStatus: optional(m.OurStatus), Detail: m.Detail})
	}
	for _, b := range r.Balances {
		v.Balances = append(v.Balances, BalanceView{Country: optional(b.Country), Currency: b.Currency,
			ProviderAmount: money.JSON(b.Provider, b.Currency), OurAmount: major(b.Ours, b.Currency)})
	}
	return v
}

// optional is s, nil when empty (null in JSON).
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// major is minor units of currency in major units, nil for none.
func major(minor *int64, currency string) *json.Number {
	if minor == nil {
		return nil
	}
	n := money.JSON(*minor, currency)
	return &n
}
