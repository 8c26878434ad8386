package events

import "encoding/json"

// Payloads of the events whose data the spec leaves "not shown" (§6.5): our
// decision, documented in docs/events.md. Keys are snake_case; every payload
// carries the stable identifiers a receiver deduplicates on, and every key is
// always present (null when it does not apply), so receivers can rely on the
// shape.

// CardTransaction is the common data of the transaction.* events: one card
// transaction (spec §2.8) as it stands when the event is emitted.
type CardTransaction struct {
	TransactionID string      `json:"transaction_id"`
	CardID        string      `json:"card_id"`
	CustomerID    string      `json:"customer_id"`
	Type          string      `json:"type"`   // AUTHORIZATION, SETTLEMENT, FUNDING, … (§2.8)
	Status        string      `json:"status"` // PENDING, PROCESSING, SUCCESS, FAILED
	Amount        json.Number `json:"amount"`
	Currency      string      `json:"currency"`
	Description   string      `json:"description"` // merchant and city for authorizations and settlements
	CreatedAt     string      `json:"created_at"`
}

// RelatedCardTransaction is a CardTransaction that follows another one: a
// settlement or reversal of an authorization, a refund of a settlement, the
// cross-border charge of a purchase. OriginalTransactionID is that other
// transaction's id, or null when the issuer did not tell it.
type RelatedCardTransaction struct {
	CardTransaction
	OriginalTransactionID *string `json:"original_transaction_id"`
}

// TransactionAuthorizationCreatedData is the data of
// transaction.authorization.created: a card payment authorization succeeded.
type TransactionAuthorizationCreatedData struct{ CardTransaction }

// EventKind returns TransactionAuthorizationCreated.
func (TransactionAuthorizationCreatedData) EventKind() Kind { return TransactionAuthorizationCreated }

// TransactionAuthorizationDeclinedData is the data of
// transaction.authorization.declined, with the issuer's reason.
type TransactionAuthorizationDeclinedData struct {
	CardTransaction
	DeclineReason string `json:"decline_reason"`
}

// EventKind returns TransactionAuthorizationDeclined.
func (TransactionAuthorizationDeclinedData) EventKind() Kind {
	return TransactionAuthorizationDeclined
}

// TransactionPreauthorizationCreatedData is the data of
// transaction.preauthorization.created: a hold was placed, to be settled or
// reversed later under the same transaction_id as original_transaction_id.
type TransactionPreauthorizationCreatedData struct{ CardTransaction }

// EventKind returns TransactionPreauthorizationCreated.
func (TransactionPreauthorizationCreatedData) EventKind() Kind {
	return TransactionPreauthorizationCreated
}

// TransactionSettlementCompletedData is the data of
// transaction.settlement.completed; original_transaction_id is the
// authorization settled.
type TransactionSettlementCompletedData struct{ RelatedCardTransaction }

// EventKind returns TransactionSettlementCompleted.
func (TransactionSettlementCompletedData) EventKind() Kind { return TransactionSettlementCompleted }

// TransactionReversalCompletedData is the data of
// transaction.reversal.completed; original_transaction_id is the
// authorization reversed. Reason is ReversalReasonExpired when we released
// a hold the network neither settled nor reversed in time,
// "issuer_timeout" when we released the hold of an approval that came after
// the network had declined on its own, null when the network (or a
// termination) reversed it.
type TransactionReversalCompletedData struct {
	RelatedCardTransaction
	Reason *string `json:"reason"`
}

// ReversalReasonExpired is the reason of a reversal that expired a hold.
const ReversalReasonExpired = "expired"

// EventKind returns TransactionReversalCompleted.
func (TransactionReversalCompletedData) EventKind() Kind { return TransactionReversalCompleted }

// TransactionRefundCompletedData is the data of
// transaction.refund.completed; original_transaction_id is the settlement
// refunded.
type TransactionRefundCompletedData struct{ RelatedCardTransaction }

// EventKind returns TransactionRefundCompleted.
func (TransactionRefundCompletedData) EventKind() Kind { return TransactionRefundCompleted }

// TransactionFundingCompletedData is the data of
// transaction.funding.completed: the card transaction of a funding.
type TransactionFundingCompletedData struct{ CardTransaction }

// EventKind returns TransactionFundingCompleted.
func (TransactionFundingCompletedData) EventKind() Kind { return TransactionFundingCompleted }

// TransactionWithdrawalCompletedData is the data of
// transaction.withdrawal.completed: the card transaction of a withdrawal.
type TransactionWithdrawalCompletedData struct{ CardTransaction }

// EventKind returns TransactionWithdrawalCompleted.
func (TransactionWithdrawalCompletedData) EventKind() Kind { return TransactionWithdrawalCompleted }

// TransactionCrossborderChargedData is the data of
// transaction.crossborder.charged; original_transaction_id is the purchase
// that crossed the border.
type TransactionCrossborderChargedData struct{ RelatedCardTransaction }

// EventKind returns TransactionCrossborderCharged.
func (TransactionCrossborderChargedData) EventKind() Kind { return TransactionCrossborderCharged }

// TransactionTerminatedData is the data of transaction.terminated: the
// TERMINATION transaction of a card termination.
type TransactionTerminatedData struct{ CardTransaction }

// EventKind returns TransactionTerminated.
func (TransactionTerminatedData) EventKind() Kind { return TransactionTerminated }

// FeeCharge is the common data of the fee.* events. A fee is taken from
// the card first, then from the company USD wallet; what neither could pay
// is a debt (debt_id, and debt.recovery.pending). from_card + from_wallet +
// debt_amount = amount.
type FeeCharge struct {
	FeeID         string      `json:"fee_id"`
	TransactionID string      `json:"transaction_id"` // the card transaction that incurred the fee
	CardID        string      `json:"card_id"`
	CustomerID    string      `json:"customer_id"`
	Amount        json.Number `json:"amount"`
	Currency      string      `json:"currency"` // USD
	FromCard      json.Number `json:"from_card"`
	FromWallet    json.Number `json:"from_wallet"`
	DebtAmount    json.Number `json:"debt_amount"`
	WalletID      *string     `json:"wallet_id"` // the USD wallet when from_wallet is above 0, else null
	DebtID        *string     `json:"debt_id"`   // the debt when debt_amount is above 0, else null
	CreatedAt     string      `json:"created_at"`
}

// FeePaymentFailureChargedData is the data of fee.payment_failure.charged
// (0.50 USD for a failed card payment).
type FeePaymentFailureChargedData struct{ FeeCharge }

// EventKind returns FeePaymentFailureCharged.
func (FeePaymentFailureChargedData) EventKind() Kind { return FeePaymentFailureCharged }

// FeeCrossborderChargedData is the data of fee.crossborder.charged (2.5
// percent plus 0.50 USD); transaction_amount is the amount the percentage was
// taken of.
type FeeCrossborderChargedData struct {
	FeeCharge
	TransactionAmount json.Number `json:"transaction_amount"`
}

// EventKind returns FeeCrossborderCharged.
func (FeeCrossborderChargedData) EventKind() Kind { return FeeCrossborderCharged }

// Fee types a debt can come from (and FeeTypeDispute, disputes.go).
const (
	FeeTypePaymentFailure = "payment_failure"
	FeeTypeCrossborder    = "crossborder"
	// FeeTypeCardSettlement is no fee: the part of a card settlement
	// (more than the card held, a capture forced or after the hold's
	// release) that neither the card nor the USD wallet could pay, owed as
	// a debt.
	FeeTypeCardSettlement = "card_settlement"
)

// DebtRecoveryPendingData is the data of debt.recovery.pending: a fee could
// be taken neither from the card nor from the company USD wallet and was
// recorded as a debt.
type DebtRecoveryPendingData struct {
	DebtID        string      `json:"debt_id"`
	FeeType       string      `json:"fee_type"`       // payment_failure, crossborder or card_dispute
	TransactionID string      `json:"transaction_id"` // the card transaction that incurred the fee
	CardID        string      `json:"card_id"`
	CustomerID    string      `json:"customer_id"`
	Amount        json.Number `json:"amount"`
	Currency      string      `json:"currency"` // USD
	CreatedAt     string      `json:"created_at"`
}

// EventKind returns DebtRecoveryPending.
func (DebtRecoveryPendingData) EventKind() Kind { return DebtRecoveryPending }

// DebtRecoveredData is the data of debt.recovered (ours): a credit to the
// company USD wallet paid recovered_amount of a pending debt, by the FEE
// ledger entry ledger_transaction_id; status is RECOVERED once
// remaining_amount is 0, else still PENDING.
type DebtRecoveredData struct {
	DebtID              string      `json:"debt_id"`
	FeeType             string      `json:"fee_type"`
	TransactionID       string      `json:"transaction_id"` // the card transaction that incurred the fee
	CardID              string      `json:"card_id"`
	WalletID            string      `json:"wallet_id"`
	LedgerTransactionID string      `json:"ledger_transaction_id"`
	RecoveredAmount     json.Number `json:"recovered_amount"`
	RemainingAmount     json.Number `json:"remaining_amount"`
	Currency            string      `json:"currency"` // USD
	Status              string      `json:"status"`   // PENDING or RECOVERED
	RecoveredAt         string      `json:"recovered_at"`
}

// EventKind returns DebtRecovered.
func (DebtRecoveredData) EventKind() Kind { return DebtRecovered }

// CustomerCreatedData is the data of customer.created, emitted once POST
// /customers/enroll or POST /customers has stored the customer: the fields
// of the customer list (§2.2), with the id as customer_id, and the outcome
// of identity verification. Identity documents are never sent.
type CustomerCreatedData struct {
	CustomerID       string `json:"customer_id"`
	FirstName        string `json:"first_name"`
	LastName         string `json:"last_name"`
	Email            string `json:"email"`
	Country          string `json:"country"`
	PhoneCountryCode string `json:"phone_country_code"`
	PhoneNumber      string `json:"phone_number"`
	KYCStatus        string `json:"kyc_status"`
	IsActive         bool   `json:"is_active"`
	CreatedAt        string `json:"created_at"`
}

// EventKind returns CustomerCreated.
func (CustomerCreatedData) EventKind() Kind { return CustomerCreated }

// CustomerKYCUpdatedData is the data of customer.kyc.updated, emitted once
// the operator console has decided the identity of a customer enrolled as
// PENDING_REVIEW: its new kyc_status (VERIFIED or REJECTED), why it was
// rejected (null otherwise) and when. Identity documents and who decided
// are never sent.
type CustomerKYCUpdatedData struct {
	CustomerID string  `json:"customer_id"`
	KYCStatus  string  `json:"kyc_status"`
	KYCReason  *string `json:"kyc_reason"`
	UpdatedAt  string  `json:"updated_at"`
}

// EventKind returns CustomerKYCUpdated.
func (CustomerKYCUpdatedData) EventKind() Kind { return CustomerKYCUpdated }
