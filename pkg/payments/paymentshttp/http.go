// Package paymentshttp is the HTTP layer of pkg/payments: its routes, which read the
// request, call the service and answer, and the wire types its answers are
// made of, converted from the domain's.
package paymentshttp

import (
	"encoding/json"
	"fmt"
	"net/http"

	"payments/pkg/field"
	"payments/pkg/guideline"
	"payments/pkg/httpapi"
	"payments/pkg/money"
	"payments/pkg/payments"
	"payments/pkg/timestamp"
)

// DefaultLimit is the page size of GET /payment/transactions (spec §8).
const DefaultLimit = 20

// payoutBody is the body of POST /payment/payout (spec §4.14). The amount is
// kept raw so that a JSON string is refused rather than read as a number.
type payoutBody struct {
	Operator    string          `json:"operator"`
	Country     string          `json:"country"`
	PhoneNumber string          `json:"phone_number"`
	Amount      json.RawMessage `json:"amount"`
	Currency    string          `json:"currency"`
	ExternalID  string          `json:"external_id"`
	NotifyURL   string          `json:"notify_url"`
	ReferenceID string          `json:"reference_id"`
	Lang        string          `json:"lang"`
	Purpose     string          `json:"purpose"`
}

// collectBody is the body of POST /payment/collect: the payout's fields
// plus reason. (The fields are repeated rather than embedded so that a
// decoding error names the field as the client wrote it.)
type collectBody struct {
	Operator    string          `json:"operator"`
	Country     string          `json:"country"`
	PhoneNumber string          `json:"phone_number"`
	Amount      json.RawMessage `json:"amount"`
	Currency    string          `json:"currency"`
	ExternalID  string          `json:"external_id"`
	NotifyURL   string          `json:"notify_url"`
	ReferenceID string          `json:"reference_id"`
	Lang        string          `json:"lang"`
	Purpose     string          `json:"purpose"`
	Reason      string          `json:"reason"`
}

func (b payoutBody) request() payments.Request {
	return collectBody{
		Operator: b.Operator, Country: b.Country, PhoneNumber: b.PhoneNumber, Amount: b.Amount, Currency: b.Currency,
		ExternalID: b.ExternalID, NotifyURL: b.NotifyURL, ReferenceID: b.ReferenceID, Lang: b.Lang, Purpose: b.Purpose,
	}.request()
}

func (b collectBody) request() payments.Request {
	return payments.Request{
		Operator: b.Operator, Country: b.Country, PhoneNumber: b.PhoneNumber, Amount: string(b.Amount), Currency: b.Currency,
		ExternalID: b.ExternalID, NotifyURL: b.NotifyURL, ReferenceID: b.ReferenceID, Lang: b.Lang, Purpose: b.Purpose,
		Reason: b.Reason,
	}
}

// Initiation is the data of an accepted payout or collection: the payout
// initiation response of spec §2.7, plus our fee_amount. Amount excludes
// the fee; error_message is null.
type Initiation struct {
	TransactionID string          `json:"transaction_id"`
	ExternalID    string          `json:"external_id"`
	Status        payments.Status `json:"status"`
	Amount        json.Number     `json:"amount"`
	FeeAmount     json.Number     `json:"fee_amount"`
	Currency      string          `json:"currency"`
	Operator      string          `json:"operator"`
	Country       string          `json:"country"`
	PhoneNumber   string          `json:"phone_number"`
	InitiatedAt   string          `json:"initiated_at"`
	ErrorMessage  *string         `json:"error_message"`
}

// paymentInitiation returns p as the response of its acceptance.
func paymentInitiation(p payments.Payment) Initiation {
	return Initiation{
		TransactionID: p.ID,
		ExternalID:    p.ExternalID,
		Status:        p.Status,
		Amount:        money.JSON(p.Amount, p.Currency),
		FeeAmount:     money.JSON(p.Fee, p.Currency),
		Currency:      p.Currency,
		Operator:      p.Operator,
		Country:       p.Country,
		PhoneNumber:   p.PhoneNumber,
		InitiatedAt:   timestamp.Format(p.CreatedAt),
		ErrorMessage:  errorMessage(p),
	}
}

// TransactionResponse is a payment transaction as clients see it (spec
// §2.7), plus our fee_amount. Amounts are major units; error_message is
// null unless the status is FAILED.
type TransactionResponse struct {
	TransactionID string          `json:"transaction_id"`
	ExternalID    string          `json:"external_id"`
	Status        payments.Status `json:"status"`
	Type          payments.Type   `json:"type"`
	Amount        json.Number     `json:"amount"`
	FeeAmount     json.Number     `json:"fee_amount"`
	Currency      string          `json:"currency"`
	Operator      string          `json:"operator"`
	Country       string          `json:"country"`
	PhoneNumber   string          `json:"phone_number"`
	Reason        string          `json:"reason"`
	Description   string          `json:"description"`
	CreatedAt     string          `json:"created_at"`
	UpdatedAt     string          `json:"updated_at"`
	ErrorMessage  *string         `json:"error_message"`
	// ReconciliationRequired is our addition: the operator gave no final
	// answer by the deadline; the funds stay reserved until it does or
	// the operator console resolves the payment.
	ReconciliationRequired bool `json:"reconciliation_required"`
}

// paymentResponse returns p as clients see it.
func paymentResponse(p payments.Payment) TransactionResponse {
	return TransactionResponse{
		TransactionID: p.ID,
		ExternalID:    p.ExternalID,
		Status:        p.Status,
		Type:          p.Type,
		Amount:        money.JSON(p.Amount, p.Currency),
		FeeAmount:     money.JSON(p.Fee, p.Currency),
		Currency:      p.Currency,
		Operator:      p.Operator,
		Country:       p.Country,
		PhoneNumber:   p.PhoneNumber,
		Reason:        p.Reason,
		Description:   p.Description,
		CreatedAt:     timestamp.Format(p.CreatedAt),
		UpdatedAt:     timestamp.Format(p.UpdatedAt),
		ErrorMessage:  errorMessage(p),

		ReconciliationRequired: p.ReconciliationRequired,
	}
}

// statusResponse is the data of GET /payment/transactions/{id}/status with
// includeUpstreamResponse=true: the transaction plus upstream, the
// operator's raw answer (null before the payment reached the operator).
type statusResponse struct {
	TransactionResponse
	Upstream json.RawMessage `json:"upstream"`
}

func errorMessage(p payments.Payment) *string {
	if p.Status != payments.StatusFailed {
		return nil
	}
	m := p.ErrorMessage
	return &m
}

// Routes registers the payment routes of the payments function:
//
//	POST /payment/payout                                  spec §4.14
//	POST /payment/collect                                 our shape, after the payout's
//	GET  /payment/transactions                            spec §4.15
//	GET  /payment/transactions/{transactionId}/status     spec §4.16
//	GET  /payment/guideline                               the payment guideline
func Routes(rt *httpapi.Router, svc *payments.Service) {
	h := handlers{svc}
	rt.Handle("POST /payment/payout", h.payout, httpapi.Money())
	rt.Handle("POST /payment/collect", h.collect, httpapi.Money())
	rt.Handle("GET /payment/transactions", h.list)
	rt.Handle("GET /payment/transactions/{transactionId}/status", h.status)
	rt.Handle("GET /payment/guideline", h.guideline)
}

type handlers struct{ svc *payments.Service }

func (h handlers) payout(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	var body payoutBody
	if err := httpapi.Decode(r, &body); err != nil {
		return err
	}
	p, err := h.svc.Payout(r.Context(), cid, body.request())
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Payout initiated successfully", paymentInitiation(p))
	return nil
}

func (h handlers) collect(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	var body collectBody
	if err := httpapi.Decode(r, &body); err != nil {
		return err
	}
	p, err := h.svc.Collect(r.Context(), cid, body.request())
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Collection initiated successfully", paymentInitiation(p))
	return nil
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	q, err := ParseQuery(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r, DefaultLimit)
	if err != nil {
		return err
	}
	res, err := h.svc.List(r.Context(), cid, q, page)
	if err != nil {
		return err
	}
	out := make([]TransactionResponse, len(res.Items))
	for i, p := range res.Items {
		out[i] = paymentResponse(p)
	}
	httpapi.RespondList(w, out, httpapi.Pagination(r, page, res.Total, res.Next))
	return nil
}

func (h handlers) status(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	doubleCheck, err := httpapi.ParseBool(r, "doubleCheck", false)
	if err != nil {
		return err
	}
	withUpstream, err := httpapi.ParseBool(r, "includeUpstreamResponse", false)
	if err != nil {
		return err
	}
	// skipCompanyCheck is for operations staff; a company token always
	// reads its own transactions, so the value is checked and ignored.
	if _, err := httpapi.ParseBool(r, "skipCompanyCheck", false); err != nil {
		return err
	}
	p, upstream, err := h.svc.Status(r.Context(), cid, r.PathValue("transactionId"), doubleCheck)
	if err != nil {
		return err
	}
	const msg = "Transaction status retrieved successfully"
	if withUpstream {
		if len(upstream) == 0 {
			upstream = json.RawMessage("null")
		}
		httpapi.Respond(w, http.StatusOK, msg, statusResponse{TransactionResponse: paymentResponse(p), Upstream: upstream})
		return nil
	}
	httpapi.Respond(w, http.StatusOK, msg, paymentResponse(p))
	return nil
}

func (h handlers) guideline(w http.ResponseWriter, r *http.Request) error {
	if _, err := httpapi.Company(r); err != nil {
		return err
	}
	rows := h.svc.Guideline().Rows()
	if rows == nil {
		rows = []guideline.Row{}
	}
	httpapi.Respond(w, http.StatusOK, fmt.Sprintf("%d items retrieved successfully", len(rows)), rows)
	return nil
}

// AdminView is a payment as the operator console sees it: the company's
// view plus whose it is, the operator's order, when the worker next handles
// it, and the console's resolution.
type AdminView struct {
	TransactionResponse
	CompanyID      string           `json:"company_id"`
	WalletID       string           `json:"wallet_id"`
	OrderID        string           `json:"order_id"`
	NextPollAt     *string          `json:"next_poll_at"`
	ResolvedStatus *payments.Status `json:"resolved_status"`
	ResolvedBy     *string          `json:"resolved_by"`
	ResolutionNote *string          `json:"resolution_note"`
	ResolvedAt     *string          `json:"resolved_at"`
}

// paymentAdminView returns p as the operator console sees it.
func paymentAdminView(p payments.Payment) AdminView {
	v := AdminView{TransactionResponse: paymentResponse(p), CompanyID: p.CompanyID, WalletID: p.WalletID, OrderID: p.OrderID}
	if !p.NextPollAt.IsZero() {
		s := timestamp.Format(p.NextPollAt)
		v.NextPollAt = &s
	}
	if r := p.Resolution; r != nil {
		at := timestamp.Format(r.At)
		v.ResolvedStatus, v.ResolvedBy, v.ResolutionNote, v.ResolvedAt = &r.Status, &r.By, &r.Note, &at
	}
	return v
}

// resolveBody is the body of POST /admin/payments/{transactionId}/resolve.
type resolveBody struct {
	Status string `json:"status"`
	Note   string `json:"note"`
}

// AdminRoutes registers the operator console's reconciliation routes (the
// router's guard must admit operators only):
//
//	GET  /admin/payments?reconciliation_required=true   payments of every company flagged for reconciliation
//	POST /admin/payments/{transactionId}/resolve        settle or refund one, {status, note}
func AdminRoutes(rt *httpapi.Router, svc *payments.Admin) {
	rt.Handle("GET /admin/payments", func(w http.ResponseWriter, r *http.Request) error {
		flagged, err := httpapi.ParseBool(r, "reconciliation_required", false)
		if err != nil {
			return err
		}
		if !flagged {
			return field.Invalid("reconciliation_required", "must be true: the console lists the payments awaiting reconciliation")
		}
		page, total, err := httpapi.ParseCursorPage(r, DefaultLimit, svc.CountFlagged)
		if err != nil {
			return err
		}
		ps, next, err := svc.Flagged(r.Context(), page.After, page.Limit)
		if err != nil {
			return err
		}
		out := make([]AdminView, len(ps))
		for i, p := range ps {
			out[i] = paymentAdminView(p)
		}
		httpapi.RespondList(w, out, httpapi.Pagination(r, page, total, next))
		return nil
	})
	rt.Handle("POST /admin/payments/{transactionId}/resolve", func(w http.ResponseWriter, r *http.Request) error {
		var body resolveBody
		if err := httpapi.Decode(r, &body); err != nil {
			return err
		}
		p, err := svc.Resolve(r.Context(), r.PathValue("transactionId"), payments.ResolveInput{
			Status: payments.Status(body.Status), Note: body.Note, By: httpapi.Operator(r.Context()),
		})
		if err != nil {
			return err
		}
		httpapi.Respond(w, http.StatusOK, "Transaction resolved", paymentAdminView(p))
		return nil
	})
}
