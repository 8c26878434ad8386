package cardshttp

import (
	"encoding/json"

	"payments/pkg/cards"
	"payments/pkg/timestamp"
)

// TxCategory is the category of every card transaction (spec §2.8).
const TxCategory = "CARD"

// TxResponse is a card transaction as the routes show it: spec §2.8 plus
// the fee, the completion time, the merchant, the decline reason, the open
// hold of an authorization, the transaction it follows and, on request,
// what the card network told us. Amounts are USD; an absent value is null.
type TxResponse struct {
	ID                    string        `json:"id"`
	Category              string        `json:"category"`
	Type                  string        `json:"type"`
	Status                string        `json:"status"`
	Amount                json.Number   `json:"amount"`
	Currency              string        `json:"currency"`
	Description           string        `json:"description"`
	FeeAmount             json.Number   `json:"fee_amount"`
	CreatedAt             string        `json:"created_at"`
	CompletedAt           *string       `json:"completed_at"`
	Merchant              *TxMerchant   `json:"merchant"`
	DeclineReason         *string       `json:"decline_reason"`
	HoldAmount            *json.Number  `json:"hold_amount"`
	OriginalTransactionID *string       `json:"original_transaction_id"`
	Card                  TxCardRef     `json:"card"`
	Customer              TxCustomerRef `json:"customer"`
	Raw                   *TxRaw        `json:"raw,omitempty"`
}

// TxMerchant is where a card was used.
type TxMerchant struct {
	Name    string `json:"name"`
	City    string `json:"city"`
	Country string `json:"country"`
}

// TxCardRef is the card of a transaction; masked_pan is null until the
// card is issued.
type TxCardRef struct {
	ID        string  `json:"id"`
	MaskedPAN *string `json:"masked_pan"`
	Brand     string  `json:"brand"`
}

// TxCustomerRef is the customer of a transaction.
type TxCustomerRef struct {
	ID        string `json:"id"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

// TxRaw is what the card network told us of a transaction, null where
// unknown: the network's id, the kind of an authorization, and what was
// settled of an authorization and refunded of that.
type TxRaw struct {
	IssuerTransactionID *string      `json:"issuer_transaction_id"`
	Kind                *string      `json:"kind"`
	SettledAmount       *json.Number `json:"settled_amount"`
	RefundedAmount      *json.Number `json:"refunded_amount"`
}

// NewTxResponse returns the transaction of v as the routes show it, with
// what the card network told us of it when includeRaw.
func NewTxResponse(v cards.TxView, includeRaw bool) TxResponse {
	tx, card, holder := v.Tx, v.Card, v.Holder
	r := TxResponse{
		ID: tx.ID, Category: TxCategory, Type: string(tx.Type), Status: string(tx.Status),
		Amount: moneyJSON(tx.Amount), Currency: cards.Currency, Description: tx.Description,
		FeeAmount: moneyJSON(tx.Fee), CreatedAt: timestamp.Format(tx.CreatedAt),
		DeclineReason:         optional(string(tx.DeclineReason)),
		OriginalTransactionID: optional(tx.OriginalID),
		Card:                  TxCardRef{ID: card.ID, MaskedPAN: optional(card.MaskedPAN()), Brand: string(card.Brand)},
		Customer:              TxCustomerRef{ID: holder.ID, FirstName: holder.FirstName, LastName: holder.LastName},
	}
	if tx.CompletedAt != nil {
		r.CompletedAt = optional(timestamp.Format(*tx.CompletedAt))
	}
	if m := tx.Merchant; m != nil {
		r.Merchant = &TxMerchant{Name: m.Name, City: m.City, Country: m.Country}
		if r.Description == "" {
			r.Description = m.Text()
		}
	}
	if tx.Type == cards.TxAuthorization {
		r.HoldAmount = moneyPtr(tx.Hold)
	}
	if includeRaw {
		r.Raw = &TxRaw{IssuerTransactionID: optional(tx.IssuerTxID), Kind: optional(string(tx.Kind))}
		if tx.Type == cards.TxAuthorization {
			r.Raw.SettledAmount, r.Raw.RefundedAmount = moneyPtr(tx.Settled), moneyPtr(tx.Refunded)
		}
	}
	return r
}

// optional returns &s, nil when s is empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// moneyPtr returns cents as an amount to show, which may be null.
func moneyPtr(cents int64) *json.Number {
	n := moneyJSON(cents)
	return &n
}

// txResponses returns the transactions of views as the routes show them.
func txResponses(views []cards.TxView, includeRaw bool) []TxResponse {
	out := make([]TxResponse, len(views))
	for i, v := range views {
		out[i] = NewTxResponse(v, includeRaw)
	}
	return out
}
