package cardshttp

import (
	"encoding/json"
	"errors"
	"net/http"

	"payments/pkg/cards"
	"payments/pkg/httpapi"
	"payments/pkg/timestamp"
)

// disputeRoutes registers the dispute routes. GET /cards/disputes/{id} is
// registered as GET /cards/{collection}/{id}: Go's router refuses the
// pattern beside GET /cards/{id}/reveals and …/transactions (a path such
// as /cards/disputes/reveals matches both), which API Gateway routes by
// their literal segments instead. Those two, more specific, keep their
// paths; this one serves /cards/disputes/{id} alone.
func disputeRoutes(rt *httpapi.Router, h handlers) {
	rt.Handle("POST /cards/transactions/{id}/disputes", h.openDispute, httpapi.Money())
	rt.Handle("GET /cards/disputes", h.disputes)
	rt.Handle("GET /cards/{collection}/{id}", h.dispute)
}

func (h handlers) openDispute(w http.ResponseWriter, r *http.Request) error {
	var in cards.DisputeInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	d, err := h.svc.OpenDispute(r.Context(), cid, r.PathValue("id"), in)
	if err != nil && d.ID != "" && errors.Is(err, cards.ErrIssuerUnavailable) {
		// Recorded, not at the issuer yet: the answer says what (OPENING).
		return httpapi.WithData(err, NewDisputeResponse(d))
	}
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusCreated, "cards.Dispute opened", NewDisputeResponse(d))
	return nil
}

func (h handlers) disputes(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	f, err := cards.ParseDisputeFilter(v.Get("status"), v.Get("card_id"))
	if err != nil {
		return err
	}
	p, err := httpapi.ParsePage(r, cards.DisputesPageSize)
	if err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	res, err := h.svc.ListDisputes(r.Context(), cid, f, p)
	if err != nil {
		return err
	}
	out := make([]DisputeResponse, len(res.Items))
	for i, d := range res.Items {
		out[i] = NewDisputeResponse(d)
	}
	httpapi.RespondList(w, out, httpapi.Pagination(r, p, res.Total, res.Next))
	return nil
}

func (h handlers) dispute(w http.ResponseWriter, r *http.Request) error {
	if r.PathValue("collection") != "disputes" {
		return httpapi.ErrRouteNotFound
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	d, err := h.svc.GetDispute(r.Context(), cid, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "cards.Dispute retrieved successfully", NewDisputeResponse(d))
	return nil
}

// DisputeResponse is a dispute as the routes show it. Amounts are USD;
// credited_amount is what the card issuer has credited for the dispute so
// far, net of what it took back, which the card (or the USD wallet of a
// terminated card) has received; card_transaction_ids are the DISPUTE
// card transactions that moved it, oldest first.
type DisputeResponse struct {
	ID                 string      `json:"id"`
	CardID             string      `json:"card_id"`
	CustomerID         string      `json:"customer_id"`
	TransactionID      string      `json:"transaction_id"`
	IssuerDisputeID    *string     `json:"issuer_dispute_id"`
	Status             string      `json:"status"`
	Reason             *string     `json:"reason"`
	Explanation        *string     `json:"explanation"`
	Amount             json.Number `json:"amount"`
	CreditedAmount     json.Number `json:"credited_amount"`
	Currency           string      `json:"currency"`
	Error              *string     `json:"error"`
	CardTransactionIDs []string    `json:"card_transaction_ids"`
	CreatedAt          string      `json:"created_at"`
	UpdatedAt          string      `json:"updated_at"`
}

// NewDisputeResponse returns d as the routes show it.
func NewDisputeResponse(d cards.Dispute) DisputeResponse {
	out := DisputeResponse{
		ID: d.ID, CardID: d.CardID, CustomerID: d.CustomerID, TransactionID: d.TransactionID,
		IssuerDisputeID: optional(d.IssuerDisputeID), Status: string(d.Status), Reason: optional(d.Reason),
		Explanation: optional(d.Explanation), Amount: moneyJSON(d.Amount), CreditedAmount: moneyJSON(d.Credited),
		Currency: cards.Currency, Error: optional(d.Error), CardTransactionIDs: make([]string, len(d.Movements)),
		CreatedAt: timestamp.Format(d.CreatedAt), UpdatedAt: timestamp.Format(d.UpdatedAt),
	}
	for i, m := range d.Movements {
		out.CardTransactionIDs[i] = m.TxID
	}
	return out
}
