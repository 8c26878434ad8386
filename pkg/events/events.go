// Package events defines every webhook event kind the service emits and the
// Event record that travels through the transactional outbox.
//
// An Event is written in the same DynamoDB transaction as the change it
// reports. Its Body, the exact bytes a receiver gets ({"event": …,
// "sequence": …, "data": …}), is fixed at that moment, so every delivery and
// retry sends the same bytes. The sequence numbers the events about one
// object (Event.Object) 1, 2, 3…; the store assigns it in that transaction
// (WithSequence). A payload's times are strings written by
// timestamp.Format.
package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"payments/pkg/ids"
)

// ErrNotFound is an event id the company does not have.
var ErrNotFound = errors.New("events: event not found")

// Kind is an event name as receivers see it in the "event" field.
type Kind string

// Event kinds with a payload shown in the spec (§6.3, §6.4).
const (
	PaymentCollect            Kind = "payment.collect"
	CardCreated               Kind = "card.created"
	CardFund                  Kind = "card.fund"
	CardWithdraw              Kind = "card.withdraw"
	CardWithdrawFailed        Kind = "card.withdraw.failed"
	CardTerminated            Kind = "card.terminated"
	CardVerificationCompleted Kind = "card.verification.completed"
)

// Event kinds named in the spec whose payload it does not show (§6.5).
const (
	TransactionAuthorizationCreated    Kind = "transaction.authorization.created"
	TransactionAuthorizationDeclined   Kind = "transaction.authorization.declined"
	TransactionPreauthorizationCreated Kind = "transaction.preauthorization.created"
	TransactionSettlementCompleted     Kind = "transaction.settlement.completed"
	TransactionReversalCompleted       Kind = "transaction.reversal.completed"
	TransactionRefundCompleted         Kind = "transaction.refund.completed"
	TransactionFundingCompleted        Kind = "transaction.funding.completed"
	TransactionWithdrawalCompleted     Kind = "transaction.withdrawal.completed"
	TransactionCrossborderCharged      Kind = "transaction.crossborder.charged"
	TransactionTerminated              Kind = "transaction.terminated"
	FeePaymentFailureCharged           Kind = "fee.payment_failure.charged"
	FeeCrossborderCharged              Kind = "fee.crossborder.charged"
	DebtRecoveryPending                Kind = "debt.recovery.pending"
	// DebtRecovered is ours: a credit to the USD wallet paid (part of) a
	// pending debt.
	DebtRecovered   Kind = "debt.recovered"
	CustomerCreated Kind = "customer.created"
)

// Status-update kinds, our names for the events the spec leaves unnamed: one
// per transition of a payout or a collection.
const (
	PayoutStatusUpdated     Kind = "payment.payout.status_updated"
	CollectionStatusUpdated Kind = "payment.collect.status_updated"
)

// CustomerKYCUpdated is ours: the operator console decided the identity of
// a customer that was waiting for review (PENDING_REVIEW).
const CustomerKYCUpdated Kind = "customer.kyc.updated"

// CardFundFailed is ours, beside the spec's card.withdraw.failed: the issuer
// refused a funding, which was given back to the wallet.
const CardFundFailed Kind = "card.fund.failed"

// Retention is how long an event is kept after its creation, whether or
// not it was delivered: the store sets the table's TTL attribute to
// CreatedAt + Retention, and GET /events serves it until DynamoDB deletes it.
const Retention = 30 * 24 * time.Hour

// Event is one occurrence of a kind, for one company.
type Event struct {
	ID        string    // uuid v7: time-ordered, stable across retries (X-Service-Event-Id)
	CompanyID string    //
	Kind      Kind      //
	Object    string    // the id of the object the event is about (Payload.EventObject)
	Sequence  int64     // the event's number among the events about Object, from 1; 0 until the store sets it
	Body      []byte    // {"event": kind, "sequence": n, "data": payload}, as delivered
	NotifyURL string    // the request's notify_url, when it asked for updates there
	CreatedAt time.Time //
}

// envelope is the body of an event; an event not yet sequenced has no
// "sequence".
type envelope struct {
	Event    Kind            `json:"event"`
	Sequence int64           `json:"sequence,omitempty"`
	Data     json.RawMessage `json:"data"`
}

// New builds an event of kind with data as its payload, made at now: its
// id is a UUID v7 of that instant, so that the delivery log, which lists and
// filters events by id, agrees with CreatedAt.
// It names no object: Build and the payment constructors set Object.
func New(companyID string, kind Kind, data any, now time.Time) (Event, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return Event{}, fmt.Errorf("events: encode %s: %w", kind, err)
	}
	body, err := json.Marshal(envelope{Event: kind, Data: raw})
	if err != nil {
		return Event{}, fmt.Errorf("events: encode %s: %w", kind, err)
	}
	return Event{
		ID:        ids.NewV7(now),
		CompanyID: companyID,
		Kind:      kind,
		Body:      body,
		CreatedAt: now.UTC(),
	}, nil
}

// WithSequence returns e numbered n among the events about its object: its
// Sequence set and its body rebuilt with "sequence" (the data bytes
// unchanged). n starts at 1.
func (e Event) WithSequence(n int64) (Event, error) {
	if n < 1 {
		return Event{}, fmt.Errorf("events: event %s: sequence %d is not positive", e.ID, n)
	}
	var env envelope
	if err := json.Unmarshal(e.Body, &env); err != nil {
		return Event{}, fmt.Errorf("events: decode event %s: %w", e.ID, err)
	}
	env.Sequence = n
	body, err := json.Marshal(env)
	if err != nil {
		return Event{}, fmt.Errorf("events: encode event %s: %w", e.ID, err)
	}
	e.Sequence, e.Body = n, body
	return e, nil
}
