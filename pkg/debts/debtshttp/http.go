// Package debtshttp is the HTTP layer of pkg/debts: its routes, which read the
// request, call the service and answer, and the wire types its answers are
// made of, converted from the domain's.
package debtshttp

import (
	"encoding/json"
	"net/http"

	"payments/pkg/debts"
	"payments/pkg/field"
	"payments/pkg/httpapi"
	"payments/pkg/money"
	"payments/pkg/timestamp"
)

// PageSize is the default page size of GET /debts.
const PageSize = 20

// Routes registers GET /debts, the company's debts.
func Routes(rt *httpapi.Router, svc *debts.Service) {
	rt.Handle("GET /debts", func(w http.ResponseWriter, r *http.Request) error {
		cid, err := httpapi.Company(r)
		if err != nil {
			return err
		}
		status, err := debts.ParseStatus(r.URL.Query().Get("status"))
		if err != nil {
			return field.On(err, "status")
		}
		page, err := httpapi.ParsePage(r, PageSize)
		if err != nil {
			return err
		}
		res, err := svc.List(r.Context(), cid, status, page)
		if err != nil {
			return err
		}
		out := make([]Response, len(res.Items))
		for i, d := range res.Items {
			out[i] = debtResponse(d)
		}
		httpapi.RespondList(w, out, httpapi.Pagination(r, page, res.Total, res.Next))
		return nil
	})
}

// Response is a Debt as clients see it: amounts in dollars, recovered_at
// null while the debt is pending.
type Response struct {
	ID              string       `json:"id"`
	Amount          json.Number  `json:"amount"`
	RemainingAmount json.Number  `json:"remaining_amount"`
	Currency        string       `json:"currency"`
	Status          debts.Status `json:"status"`
	FeeType         string       `json:"fee_type"`
	TransactionID   string       `json:"transaction_id"`
	CardID          string       `json:"card_id"`
	CustomerID      string       `json:"customer_id"`
	CreatedAt       string       `json:"created_at"`
	RecoveredAt     *string      `json:"recovered_at"`
}

// debtResponse returns d as clients see it.
func debtResponse(d debts.Debt) Response {
	out := Response{
		ID: d.ID, Amount: money.JSON(d.Amount, debts.Currency), RemainingAmount: money.JSON(d.Remaining, debts.Currency),
		Currency: debts.Currency, Status: d.Status, FeeType: d.FeeType,
		TransactionID: d.TransactionID, CardID: d.CardID, CustomerID: d.CustomerID,
		CreatedAt: timestamp.Format(d.CreatedAt),
	}
	if d.RecoveredAt != nil {
		at := timestamp.Format(*d.RecoveredAt)
		out.RecoveredAt = &at
	}
	return out
}
