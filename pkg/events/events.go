// Package events defines every webhook event kind the service emits and the
// Event record that travels through the transactional outbox.
//
// An Event is written in the same DynamoDB transaction as the change it
// reports. Its Body, the exact bytes a receiver gets ({"event": …,
// "data": …}), is fixed at that moment, so every delivery and retry sends the
// same bytes. A payload's times are strings written by timestamp.Format.
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
	Body      []byte    // {"event": kind, "data": payload}, as delivered
	NotifyURL string    // the request's notify_url, when it asked for updates there
	CreatedAt time.Time //
}

// New builds an event of kind with data as its payload, made at now: its
// id is a UUID v7 of that instant, so that the delivery log, which lists and
// filters events by id, agrees with CreatedAt.
func New(companyID string, kind Kind, data any, now time.Time) (Event, error) {
	body, err := json.Marshal(struct {
		Event Kind `json:"event"`
		Data  any  `json:"data"`
	}{kind, data})
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
