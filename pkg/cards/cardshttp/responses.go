package cardshttp

import (
	"encoding/json"

	"payments/pkg/cards"
	"payments/pkg/money"
	"payments/pkg/providers/issuer"
	"payments/pkg/timestamp"
)

// Response is a card as the routes show it: spec §2.5 plus is_locked and
// available_balance. Without a reveal, number and cvv are opaque tokens
// (vault.Sealed.Token), null until the card is issued and for a card with
// nothing sealed (production mode: Stripe keeps them).
type Response struct {
	ID               string      `json:"id"`
	CustomerID       string      `json:"customer_id"`
	Status           string      `json:"status"`
	Balance          json.Number `json:"balance"`
	AvailableBalance json.Number `json:"available_balance"`
	Currency         string      `json:"currency"`
	MaskedPAN        *string     `json:"masked_pan"`
	Number           *string     `json:"number"`
	CVV              *string     `json:"cvv"`
	ExpiryMonth      *int        `json:"expiry_month"`
	ExpiryYear       *int        `json:"expiry_year"`
	Brand            string      `json:"brand"`
	IsVirtual        bool        `json:"is_virtual"`
	IsPhysical       bool        `json:"is_physical"`
	IsActive         bool        `json:"is_active"`
	IsLocked         bool        `json:"is_locked"`
	CreatedAt        string      `json:"created_at"`
	UpdatedAt        string      `json:"updated_at"`
}

// NewResponse returns c as the routes show it, without its secrets.
func NewResponse(c cards.Card) Response {
	r := Response{
		ID: c.ID, CustomerID: c.CustomerID, Status: string(c.Status), Balance: moneyJSON(c.Balance),
		AvailableBalance: moneyJSON(c.Available()), Currency: cards.Currency, Brand: string(c.Brand),
		IsVirtual: true, IsPhysical: false, IsActive: c.IsActive(), IsLocked: c.IsLocked,
		CreatedAt: timestamp.Format(c.CreatedAt), UpdatedAt: timestamp.Format(c.UpdatedAt),
	}
	if c.Last4 != "" {
		masked, month, year := c.MaskedPAN(), c.ExpiryMonth, c.ExpiryYear
		r.MaskedPAN, r.ExpiryMonth, r.ExpiryYear = &masked, &month, &year
	}
	if !c.Sealed.IsZero() { // nothing is sealed of a card whose issuer keeps its secrets (Stripe)
		number, cvv := c.Sealed.NumberToken, c.Sealed.CVVToken
		r.Number, r.CVV = &number, &cvv
	}
	return r
}

// moneyJSON returns cents as an amount to show.
func moneyJSON(cents int64) json.Number { return money.JSON(cents, cards.Currency) }

// readResponse is GET /cards/{id}: the card, revealed or not, and raw.
type readResponse struct {
	Response
	Raw *rawCard `json:"raw,omitempty"`
}

// rawCard is the issuer's record of a card, its number masked.
type rawCard struct {
	ID           string `json:"id"`
	CardholderID string `json:"cardholder_id"`
	Reference    string `json:"reference"`
	Status       string `json:"status"`
	// Balance is null at an issuer that keeps no balance per card.
	Balance      *json.Number `json:"balance"`
	Brand        string       `json:"brand"`
	MaskedNumber string       `json:"masked_number"`
	ExpiryMonth  int          `json:"expiry_month"`
	ExpiryYear   int          `json:"expiry_year"`
	CreatedAt    string       `json:"created_at"`
}

func newRawCard(c issuer.Card) *rawCard {
	r := &rawCard{
		ID: c.ID, CardholderID: c.CardholderID, Reference: c.Reference, Status: string(c.Status),
		Brand: string(c.Brand), MaskedNumber: "**** **** **** " + c.Last4,
		ExpiryMonth: c.ExpiryMonth, ExpiryYear: c.ExpiryYear, CreatedAt: timestamp.Format(c.CreatedAt),
	}
	if !c.BalanceUnknown {
		b := moneyJSON(c.Balance)
		r.Balance = &b
	}
	return r
}

func newReadResponse(r cards.Read) readResponse {
	out := readResponse{Response: NewResponse(r.Card)}
	if r.Number != "" {
		out.Number, out.CVV = &r.Number, &r.CVV
	}
	if r.Raw != nil {
		out.Raw = newRawCard(*r.Raw)
	}
	return out
}

// listResponse is GET /cards (spec §4.17).
type listResponse struct {
	CompanyID  string             `json:"company_id"`
	Statistics statisticsResponse `json:"statistics"`
	Cards      []Response         `json:"cards"`
}

type statisticsResponse struct {
	Total          int                            `json:"total"`
	Active         int                            `json:"active"`
	Frozen         int                            `json:"frozen"`
	Terminated     int                            `json:"terminated"`
	Pending        int                            `json:"pending"`
	Failed         int                            `json:"failed"`
	TotalBalance   json.Number                    `json:"total_balance"`
	AvailableSlots int                            `json:"available_slots"`
	ByCustomer     map[string]customerFiguresJSON `json:"by_customer"`
}

type customerFiguresJSON struct {
	Cards   int         `json:"cards"`
	Balance json.Number `json:"balance"`
}

func newStatisticsResponse(s cards.Statistics) statisticsResponse {
	out := statisticsResponse{
		Total: s.Total, Active: s.Active, Frozen: s.Frozen, Terminated: s.Terminated, Pending: s.Pending,
		Failed: s.Failed, TotalBalance: moneyJSON(s.TotalBalance), AvailableSlots: s.AvailableSlots,
		ByCustomer: make(map[string]customerFiguresJSON, len(s.ByCustomer)),
	}
	for id, f := range s.ByCustomer {
		out.ByCustomer[id] = customerFiguresJSON{Cards: f.Cards, Balance: moneyJSON(f.Balance)}
	}
	return out
}

// customerCardResponse is a card of GET /customers/{id}/cards, which also
// carries the sample's masked_number.
type customerCardResponse struct {
	Response
	MaskedNumber string `json:"masked_number"`
}

// moveResponse is the card fund result of spec §2.8, and the answer of a
// withdrawal, with the card transaction's status.
type moveResponse struct {
	TransactionID     string      `json:"transaction_id"`
	CardID            string      `json:"card_id"`
	Amount            json.Number `json:"amount"`
	Currency          string      `json:"currency"`
	FeeAmount         json.Number `json:"fee_amount"`
	CardBalanceBefore json.Number `json:"card_balance_before"`
	CardBalanceAfter  json.Number `json:"card_balance_after"`
	Status            string      `json:"status"`
}

func newMoveResponse(m cards.MoveResult) moveResponse {
	return moveResponse{
		TransactionID: m.Tx.ID, CardID: m.Tx.CardID, Amount: moneyJSON(m.Tx.Amount), Currency: cards.Currency,
		FeeAmount: moneyJSON(m.Tx.Fee), CardBalanceBefore: moneyJSON(m.BalanceBefore),
		CardBalanceAfter: moneyJSON(m.BalanceAfter), Status: string(m.Tx.Status),
	}
}

// statusResponse is the answer of freeze and unfreeze (spec §4.21, §4.22).
type statusResponse struct {
	CardID     string `json:"card_id"`
	CardStatus string `json:"card_status"`
	IsLocked   bool   `json:"is_locked"`
}

// terminateResponse is the answer of POST /cards/{id}/terminate:
// RefundAmount is what the termination refunded at once; RefundProcessed
// is false while the card keeps money for open holds (HeldAmount), which
// the sweeper releases to the wallet unless they are settled.
type terminateResponse struct {
	CardID          string      `json:"card_id"`
	CardStatus      string      `json:"card_status"`
	RefundAmount    json.Number `json:"refund_amount"`
	RefundProcessed bool        `json:"refund_processed"`
	HeldAmount      json.Number `json:"held_amount"`
	TransactionID   string      `json:"transaction_id"`
}

// revealSessionResponse is POST /cards/{id}/reveal-sessions: at Stripe its
// ephemeral key (ephemeral_key_secret, expires_at, stripe_card_id), in the
// sandbox the clear number, cvv and expiry; what the other issuer has not
// is null.
type revealSessionResponse struct {
	CardID             string  `json:"card_id"`
	Issuer             string  `json:"issuer"`
	EphemeralKeySecret *string `json:"ephemeral_key_secret"`
	ExpiresAt          *string `json:"expires_at"`
	StripeCardID       *string `json:"stripe_card_id"`
	Number             *string `json:"number"`
	CVV                *string `json:"cvv"`
	ExpiryMonth        *int    `json:"expiry_month"`
	ExpiryYear         *int    `json:"expiry_year"`
}

func newRevealSessionResponse(rs cards.RevealSession) revealSessionResponse {
	out := revealSessionResponse{CardID: rs.CardID, Issuer: rs.Issuer}
	if rs.EphemeralKeySecret != "" {
		expires := timestamp.Format(rs.ExpiresAt)
		out.EphemeralKeySecret, out.ExpiresAt, out.StripeCardID = &rs.EphemeralKeySecret, &expires, &rs.IssuerCardID
	}
	if rs.Number != "" {
		out.Number, out.CVV, out.ExpiryMonth, out.ExpiryYear = &rs.Number, &rs.CVV, &rs.ExpiryMonth, &rs.ExpiryYear
	}
	return out
}

// revealResponse is one audit record of GET /cards/{id}/reveals.
type revealResponse struct {
	ID        string `json:"id"`
	CardID    string `json:"card_id"`
	KeyID     string `json:"key_id"`
	SourceIP  string `json:"source_ip"`
	UserAgent string `json:"user_agent"`
	RequestID string `json:"request_id"`
	CreatedAt string `json:"created_at"`
}

func newRevealResponse(r cards.Reveal) revealResponse {
	return revealResponse{
		ID: r.ID, CardID: r.CardID, KeyID: r.KeyID, SourceIP: r.SourceIP, UserAgent: r.UserAgent,
		RequestID: r.RequestID, CreatedAt: timestamp.Format(r.CreatedAt),
	}
}
