package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"payments/pkg/guideline"
	"payments/pkg/idempotency"
	"payments/pkg/page"
	"payments/pkg/payments"
	"payments/pkg/sessions"
	"payments/pkg/webhooks"
)

// Payouts makes the company's payouts and reads its payments
// (payments.Service).
type Payouts interface {
	Payout(ctx context.Context, companyID string, r payments.Request) (payments.Payment, error)
	Get(ctx context.Context, companyID, id string) (payments.Payment, error)
	List(ctx context.Context, companyID string, q payments.Query, p page.Request) (page.Result[payments.Payment], error)
	Guideline() *guideline.Guideline
}

// payoutsRoutes are the Payouts pages and the payment's.
func (h *Handler) payoutsRoutes() []route {
	return []route{
		{"GET /dashboard/payouts", ReadMoney, h.payoutsPage},
		{"POST /dashboard/payouts", MoveMoney, h.payout},
		{"GET /dashboard/payments/{id}", ReadMoney, h.paymentPage},
	}
}

// payoutForm is the single payout form: the country chosen, the
// guideline's operators and currencies there, what was entered, and the
// form's key.
type payoutForm struct {
	Countries   []guideline.CountryInfo
	Country     string
	CountryName string
	PhoneCode   string
	Operators   []string
	Currencies  []string
	Key         string
	Operator    string
	Currency    string
	Phone       string
	Amount      string
	Reference   string
	Field       string
}

// payoutsData is the Payouts page's.
type payoutsData struct {
	CanPay  bool
	Payout  payoutForm
	Bulk    bulkForm
	Batches []batchRow
}

// newPayoutForm returns the form for country (the guideline's code), or
// the choice of a country when it is not one the guideline has.
func (h *Handler) newPayoutForm(country string) payoutForm {
	g := h.deps.Payouts.Guideline()
	f := payoutForm{Key: newFormKey()}
	seen := map[string]bool{}
	for _, row := range g.Rows() {
		if !seen[row.CountryISOCode] {
			seen[row.CountryISOCode] = true
			f.Countries = append(f.Countries, guideline.CountryInfo{ISOCode: row.CountryISOCode, Name: row.Country, PhoneCode: row.CountryPhoneCode})
		}
		if row.CountryISOCode != country {
			continue
		}
		f.Country, f.CountryName, f.PhoneCode = row.CountryISOCode, row.Country, strings.TrimPrefix(row.CountryPhoneCode, "+")
		f.Currencies = append(f.Currencies, row.Currency)
		for _, op := range row.Operators {
			if !slices.Contains(f.Operators, op) {
				f.Operators = append(f.Operators, op)
			}
		}
	}
	slices.SortFunc(f.Countries, func(a, b guideline.CountryInfo) int { return strings.Compare(a.Name, b.Name) })
	return f
}

// payoutsPage shows the single payout form (its country from the query),
// the bulk upload and the last batches.
func (h *Handler) payoutsPage(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	h.renderPayouts(w, r, s, http.StatusOK, h.newPayoutForm(r.URL.Query().Get("country")), "")
}

// renderPayouts renders the Payouts page with the single payout form f
// and a message.
func (h *Handler) renderPayouts(w http.ResponseWriter, r *http.Request, s sessions.Session, status int, f payoutForm, msg string) {
	d := payoutsData{CanPay: Allowed(s.Role, MoveMoney), Payout: f, Bulk: bulkForm{Key: newFormKey()}}
	batches, err := h.deps.Batches.List(r.Context(), s.CompanyID, page.Request{Page: 1, Limit: 10})
	if err != nil {
		h.failed(w, r, err)
		return
	}
	for _, b := range batches.Items {
		d.Batches = append(d.Batches, batchRowOf(b))
	}
	h.render(w, r, status, "payouts", view{Title: "Payouts", Nav: "payouts", Error: msg, Data: d})
}

// payout makes the single payout the form asks for, once per form, and
// shows it.
func (h *Handler) payout(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	if err := r.ParseForm(); err != nil {
		h.message(w, r, http.StatusBadRequest, "Payout not made", "The form could not be read.")
		return
	}
	f := h.newPayoutForm(r.PostFormValue("country"))
	f.Key = r.PostFormValue("form_key")
	f.Operator, f.Currency = r.PostFormValue("operator"), r.PostFormValue("currency")
	f.Phone, f.Amount, f.Reference = strings.TrimSpace(r.PostFormValue("phone_number")), strings.TrimSpace(r.PostFormValue("amount")), strings.TrimSpace(r.PostFormValue("reference"))
	req := payments.Request{
		Operator: f.Operator, Country: r.PostFormValue("country"), PhoneNumber: f.Phone, Amount: f.Amount,
		Currency: f.Currency, ReferenceID: f.Reference,
	}
	hash := idempotency.RequestHash(r.Method, r.URL.Path, []byte(url.Values{
		"operator": {req.Operator}, "country": {req.Country}, "phone_number": {req.PhoneNumber},
		"amount": {req.Amount}, "currency": {req.Currency}, "reference": {req.ReferenceID},
	}.Encode()))
	id, err := h.once(r.Context(), s.CompanyID, f.Key, hash, func(ctx context.Context) (string, error) {
		p, err := h.deps.Payouts.Payout(ctx, s.CompanyID, req)
		return p.ID, err
	})
	if err != nil {
		msg, fieldName, ok := h.refusal(err)
		if !ok {
			h.failed(w, r, err)
			return
		}
		f.Field = fieldName
		if !errors.Is(err, errFormInUse) {
			f.Key = newFormKey()
		}
		h.renderPayouts(w, r, s, http.StatusUnprocessableEntity, f, msg)
		return
	}
	h.record(r, s, "Payout made", id)
	http.Redirect(w, r, "/dashboard/payments/"+id, http.StatusSeeOther)
}

// refusal words err for the person who sent a form: the message and field
// of the API's answer to it when the catalogue has one below 500, or a
// sentence of the dashboard's own; ok is false for a failure, which is no
// refusal.
func (h *Handler) refusal(err error) (msg, fieldName string, ok bool) {
	switch {
	case errors.Is(err, errFormInUse):
		return "This form is still being sent. Wait a moment, then look for the result before sending it again.", "", true
	case errors.Is(err, errFormReused):
		return "This form was already sent with other values. Check the values, then send it again.", "", true
	}
	body, known := h.deps.Errors.Body(err)
	if !known || body.StatusCode >= 500 {
		return "", "", false
	}
	return body.Message, body.Field, true
}

// paymentData is a payment's page.
type paymentData struct {
	ID, ExternalID, Type, Status, Final                     string
	Amount, Fee, Total, Operator, Country, Phone, Reference string
	Error, Created, Updated, Completed                      string
	Reconciliation, Terminal                                bool
	// History is the payment's events, oldest first, each with its
	// webhook deliveries' status; CanResend shows their Resend buttons.
	History   []eventRow
	CanResend bool
}

// historyLimit bounds the events read for a payment's history: those of
// the company between the payment's acceptance and a minute after its
// last change.
const historyLimit = 100

// history returns the events about payment p, oldest first: its status
// history, each event with its deliveries' status (webhooks.Record).
func (h *Handler) history(ctx context.Context, companyID string, p payments.Payment) ([]eventRow, error) {
	q := webhooks.Query{From: p.CreatedAt.Add(-time.Second), To: p.UpdatedAt.Add(time.Minute)}
	res, err := h.deps.Log.List(ctx, companyID, q, page.Request{Page: 1, Limit: historyLimit})
	if err != nil {
		return nil, err
	}
	var rows []eventRow
	for _, rec := range slices.Backward(res.Items) {
		if rec.Event.Object == p.ID {
			rows = append(rows, eventRow{ID: rec.Event.ID, Kind: string(rec.Event.Kind), Created: when(rec.Event.CreatedAt), Status: string(rec.Status())})
		}
	}
	return rows, nil
}

// paymentPage shows one of the company's payments; while it is not final
// its status section asks for itself again every two seconds (htmx), so
// that the page follows the payment to SUCCESS or FAILED.
func (h *Handler) paymentPage(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	p, err := h.deps.Payouts.Get(r.Context(), s.CompanyID, r.PathValue("id"))
	if errors.Is(err, payments.ErrNotFound) {
		h.notFound(w, r)
		return
	}
	if err != nil {
		h.failed(w, r, err)
		return
	}
	d := paymentData{
		ID: p.ID, ExternalID: p.ExternalID, Type: string(p.Type), Status: string(p.Status),
		Amount: Amount(p.Amount, p.Currency), Fee: Amount(p.Fee, p.Currency), Total: Amount(p.Total(), p.Currency),
		Operator: p.Operator, Country: countryName(p.Country), Phone: p.PhoneNumber, Reference: p.ReferenceID,
		Created: when(p.CreatedAt), Updated: when(p.UpdatedAt),
		Reconciliation: p.ReconciliationRequired, Terminal: p.Status.Terminal(),
	}
	if p.Status == payments.StatusFailed {
		d.Error = p.ErrorMessage
	}
	if p.CompletedAt != nil {
		d.Completed = when(*p.CompletedAt)
	}
	if d.History, err = h.history(r.Context(), s.CompanyID, p); err != nil {
		h.failed(w, r, err)
		return
	}
	d.CanResend = Allowed(s.Role, ManageDevelopers)
	h.render(w, r, http.StatusOK, "payment", view{Title: "Payment " + p.ID, Nav: "transactions", Data: d})
}

// countryName returns the name of the country of ISO code iso, or iso.
func countryName(iso string) string {
	if c, ok := guideline.Country(iso); ok {
		return c.Name
	}
	return iso
}
