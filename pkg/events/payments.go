package events

import (
	"encoding/json"
	"time"
)

// PaymentCollectData is the payload of payment.collect (spec §6.3), emitted
// when a collection is initiated. Amount is in major units.
type PaymentCollectData struct {
	TransactionID string      `json:"transaction_id"`
	ExternalID    string      `json:"external_id"`
	Status        string      `json:"status"`
	Amount        json.Number `json:"amount"`
	Currency      string      `json:"currency"`
	Country       string      `json:"country"`
	Operator      string      `json:"operator"`
	PhoneNumber   string      `json:"phone_number"`
	InitiatedAt   string      `json:"initiated_at"`
}

// PaymentStatusData is the payload of the status-update events,
// payment.payout.status_updated and payment.collect.status_updated: one per
// transition of a payment transaction. PreviousStatus is null for the
// payout's acceptance (none → PENDING); ErrorMessage is null unless Status
// is FAILED. Amount excludes the fee; both are in major units.
type PaymentStatusData struct {
	TransactionID  string      `json:"transaction_id"`
	ExternalID     string      `json:"external_id"`
	Type           string      `json:"type"`
	Status         string      `json:"status"`
	PreviousStatus *string     `json:"previous_status"`
	Amount         json.Number `json:"amount"`
	FeeAmount      json.Number `json:"fee_amount"`
	Currency       string      `json:"currency"`
	Country        string      `json:"country"`
	Operator       string      `json:"operator"`
	PhoneNumber    string      `json:"phone_number"`
	ErrorMessage   *string     `json:"error_message"`
	UpdatedAt      string      `json:"updated_at"`
}

// NewPaymentCollect builds the payment.collect event of a new collection.
// It goes to the company's webhook URL only.
func NewPaymentCollect(companyID string, d PaymentCollectData, now time.Time) (Event, error) {
	e, err := New(companyID, PaymentCollect, d, now)
	if err != nil {
		return Event{}, err
	}
	e.Object = d.EventObject()
	return e, nil
}

// NewPaymentStatusUpdated builds the status-update event of one transition
// of a payout (kind PayoutStatusUpdated) or a collection (kind
// CollectionStatusUpdated). notifyURL, the request's notify_url, may be
// empty; when set the same update is delivered there as well.
func NewPaymentStatusUpdated(companyID string, kind Kind, d PaymentStatusData, notifyURL string, now time.Time) (Event, error) {
	e, err := New(companyID, kind, d, now)
	if err != nil {
		return Event{}, err
	}
	e.Object, e.NotifyURL = d.EventObject(), notifyURL
	return e, nil
}
