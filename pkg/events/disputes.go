package events

import "encoding/json"

// Dispute event kinds, ours: a company's dispute of a card settlement,
// opened at the card issuer and moved on by it.
const (
	CardDisputeCreated Kind = "card.dispute.created"
	CardDisputeUpdated Kind = "card.dispute.updated"
)

// FeeTypeDispute is the fee_type of a debt a lost dispute left: the credit
// the issuer took back was more than the card and the USD wallet had.
const FeeTypeDispute = "card_dispute"

// CardDispute is the dispute that card.dispute.created and
// card.dispute.updated are about. Amounts are USD, in major units:
// amount is what is disputed, credited_amount what the issuer has credited
// for it so far, net of what it took back (the card follows it).
type CardDispute struct {
	DisputeID      string      `json:"dispute_id"`
	CardID         string      `json:"card_id"`
	CustomerID     string      `json:"customer_id"`
	TransactionID  string      `json:"transaction_id"` // the SETTLEMENT disputed
	Status         string      `json:"status"`         // SUBMITTED, WON or LOST
	Reason         *string     `json:"reason"`         // the company's; null for a dispute the issuer opened without us
	Amount         json.Number `json:"amount"`
	CreditedAmount json.Number `json:"credited_amount"`
	Currency       string      `json:"currency"` // USD
}

// EventObject returns the dispute's id.
func (d CardDispute) EventObject() string { return d.DisputeID }

// CardDisputeCreatedData is the data of card.dispute.created: the issuer
// has the dispute, opened by the company or at the issuer without us.
type CardDisputeCreatedData struct {
	CardDispute
	CreatedAt string `json:"created_at"`
}

// EventKind returns CardDisputeCreated.
func (CardDisputeCreatedData) EventKind() Kind { return CardDisputeCreated }

// CardDisputeUpdatedData is the data of card.dispute.updated: the issuer
// moved the dispute on, its status or what it credited.
type CardDisputeUpdatedData struct {
	CardDispute
	PreviousStatus string `json:"previous_status"`
	// CardTransactionID is the DISPUTE card transaction that moved the
	// change of credited_amount (to the card, or to the wallet of a
	// terminated card, or back from them); null when nothing moved.
	CardTransactionID *string `json:"card_transaction_id"`
	UpdatedAt         string  `json:"updated_at"`
}

// EventKind returns CardDisputeUpdated.
func (CardDisputeUpdatedData) EventKind() Kind { return CardDisputeUpdated }
