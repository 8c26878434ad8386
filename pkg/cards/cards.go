// Package cards holds the USD virtual cards a company issues to its
// verified customers, and every movement of money between the company's
// USD wallet and its cards.
//
// Our card record is the authority on a card's balance and status: the
// issuer is told of every change. A movement is written in two steps, each
// one DynamoDB transaction that holds the wallet change and its ledger
// entries, the card change, the card transaction and the outbox event:
//
//  1. acceptance: the money leaves its source (the wallet for an issuance
//     or a funding, the card for a withdrawal) and the card transaction is
//     PROCESSING;
//  2. settlement, once the issuer answers definitively: the money reaches
//     its destination and the transaction is SUCCESS, or it goes back to
//     its source and the transaction is FAILED.
//
// Between the two, the money is in flight, counted by the open card
// transaction; an issuer that cannot be reached leaves it there (never
// refunded on a time-out), and the sweeper asks the issuer again. Each
// card transaction records in CardDelta and WalletDelta what it has moved
// so far, so that VerifyLedger can check that a card's balance is the sum
// of its transactions and that money moved between the wallet and the
// cards is conserved, fees aside.
package cards

import (
	"context"
	"errors"
	"time"

	"payments/pkg/debts"
	"payments/pkg/events"
	"payments/pkg/httpapi"
	"payments/pkg/vault"
	"payments/pkg/wallets"
)

// Errors of this package; pkg/app maps them to HTTP (spec §7).
var (
	ErrNotFound            = errors.New("cards: card not found")
	ErrCustomerNotFound    = errors.New("cards: customer not found")
	ErrCustomerNotVerified = errors.New("cards: customer KYC not verified")
	ErrNoUSDWallet         = errors.New("cards: no USD wallet")
	ErrNoSlots             = errors.New("cards: no card slots available")
	ErrInsufficientWallet  = errors.New("cards: insufficient wallet balance")
	ErrInsufficientCard    = errors.New("cards: insufficient card balance")
	ErrNotActive           = errors.New("cards: card not active")
	ErrAlreadyFrozen       = errors.New("cards: card already frozen")
	ErrNotFrozen           = errors.New("cards: card not frozen")
	ErrTerminated          = errors.New("cards: card terminated")
	ErrLocked              = errors.New("cards: card is locked; unfreeze with unlock=true")
	ErrNoCards             = errors.New("cards: customer has no cards")
	ErrTransactionNotFound = errors.New("cards: transaction not found")
	// ErrIssuerUnavailable is an issuer that could not be reached: a
	// movement it has not answered stays PROCESSING and is finished later.
	ErrIssuerUnavailable = errors.New("cards: card issuer unavailable")
	// ErrIssuerDeclined is a funding or withdrawal the issuer refused: it
	// was reversed, nothing moved.
	ErrIssuerDeclined = errors.New("cards: declined by the card issuer")
	// ErrRevealNotAudited is a reveal whose audit record could not be
	// written: nothing is revealed.
	ErrRevealNotAudited = errors.New("cards: the reveal could not be audited")
	// ErrEventApplied is an issuer notification applied before: nothing
	// was written again.
	ErrEventApplied = errors.New("cards: issuer event already applied")
	// ErrChanged is a card that another request changed first; the
	// request may be repeated.
	ErrChanged = errors.New("cards: card changed by another request")
)

// Currency is the currency of every card.
const Currency = "USD"

// Status is a card's state (spec §2.5, §3.3).
type Status string

// Card statuses.
const (
	Pending    Status = "PENDING"
	Active     Status = "ACTIVE"
	Frozen     Status = "FROZEN"
	Suspended  Status = "SUSPENDED"
	Terminated Status = "TERMINATED"
	Failed     Status = "FAILED"
)

// Statuses lists the card statuses.
var Statuses = []Status{Pending, Active, Frozen, Suspended, Terminated, Failed}

// Live reports whether a card in status s holds a card slot: it is neither
// TERMINATED nor FAILED.
func (s Status) Live() bool { return s != Terminated && s != Failed }

// Brand is a card network.
type Brand string

// Brands.
const (
	Visa       Brand = "VISA"
	Mastercard Brand = "MASTERCARD"
)

// Card is a company's card. Amounts are USD cents.
type Card struct {
	ID           string
	CompanyID    string
	CustomerID   string
	Brand        Brand
	Status       Status
	Balance      int64
	Last4        string
	ExpiryMonth  int
	ExpiryYear   int
	Number, CVV  vault.Sealed // zero until the issuer has issued the card
	IssuerCardID string
	// Held is the sum of the card's open authorization holds: the part of
	// Balance that cannot be spent again (spec §4.19's available_balance is
	// Balance − Held).
	Held int64
	// IsLocked is the deeper lock of PUT /cards/{id}/freeze?lock=true.
	IsLocked  bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// IsActive reports whether the card can still hold money: it is issued and
// not terminated.
func (c Card) IsActive() bool {
	return c.Status == Active || c.Status == Frozen || c.Status == Suspended
}

// Available returns what the card can still spend: its balance less its
// open holds.
func (c Card) Available() int64 { return c.Balance - c.Held }

// MaskedPAN returns the card's number with all but its last 4 digits
// hidden.
func (c Card) MaskedPAN() string {
	if c.Last4 == "" {
		return ""
	}
	return "**** **** **** " + c.Last4
}

// TxType is the type of a card transaction (spec §2.8).
type TxType string

// Card transaction types (spec §2.8).
const (
	TxAuthorization TxType = "AUTHORIZATION"
	TxSettlement    TxType = "SETTLEMENT"
	TxFunding       TxType = "FUNDING"
	TxWithdrawal    TxType = "WITHDRAWAL"
	TxTermination   TxType = "TERMINATION"
	TxDecline       TxType = "DECLINE"
	TxReversal      TxType = "REVERSAL"
	TxRefund        TxType = "REFUND"
	TxCrossBorder   TxType = "CROSS-BORDER"
)

// TxTypes lists the card transaction types.
var TxTypes = []TxType{TxAuthorization, TxSettlement, TxFunding, TxWithdrawal, TxTermination, TxDecline, TxReversal, TxRefund, TxCrossBorder}

// AuthKind is the kind of an authorization the card network asked for.
type AuthKind string

// Authorization kinds.
const (
	// KindAuthorization is a purchase: its hold is settled or reversed.
	KindAuthorization AuthKind = "AUTHORIZATION"
	// KindPreauthorization is a hold placed ahead of a final amount (a
	// hotel, a fuel pump), settled or reversed later.
	KindPreauthorization AuthKind = "PREAUTHORIZATION"
	// KindVerification is a merchant checking the card with a zero amount:
	// no hold.
	KindVerification AuthKind = "VERIFICATION"
)

// DeclineReason says why an authorization was declined.
type DeclineReason string

// Decline reasons, in the order they are checked.
const (
	DeclineTerminated   DeclineReason = "card_terminated"
	DeclineInactive     DeclineReason = "card_inactive"
	DeclineLocked       DeclineReason = "card_locked"
	DeclineFrozen       DeclineReason = "card_frozen"
	DeclineInsufficient DeclineReason = "insufficient_funds"
)

// Merchant is where a card was used.
type Merchant struct {
	Name    string
	City    string
	Country string // ISO 3166-1 alpha-2
}

// TxStatus is a card transaction's state.
type TxStatus string

// Card transaction statuses.
const (
	// TxPending is an authorization whose hold is open.
	TxPending    TxStatus = "PENDING"
	TxProcessing TxStatus = "PROCESSING"
	TxSuccess    TxStatus = "SUCCESS"
	TxFailed     TxStatus = "FAILED"
)

// TxStatuses lists the card transaction statuses.
var TxStatuses = []TxStatus{TxPending, TxProcessing, TxSuccess, TxFailed}

// Transaction is a card transaction. Amounts are USD cents.
type Transaction struct {
	ID         string
	CompanyID  string
	CardID     string
	CustomerID string
	WalletID   string
	Type       TxType
	Status     TxStatus
	Amount     int64
	Fee        int64
	// CardDelta and WalletDelta are what the transaction has moved so
	// far: added to the card's balance and to the wallet's payout balance
	// (fees aside: Fee is charged on top of the source's side).
	CardDelta   int64
	WalletDelta int64
	// Issuance marks the initial funding of a new card; FeeEntryID is then
	// the wallet ledger entry of its issuance fee, if any.
	Issuance    bool
	FeeEntryID  string
	Description string
	// Error says why a FAILED transaction failed.
	Error string
	// The card network's transactions (authorizations and what follows
	// them) also have:
	//
	// IssuerTxID, the network's id of the transaction; Kind, of an
	// authorization; Merchant; OriginalID, the transaction this one
	// follows (the authorization settled, reversed or refunded, the
	// settlement a cross-border charge is for); DeclineReason, of a
	// DECLINE.
	IssuerTxID    string
	Kind          AuthKind
	Merchant      *Merchant
	OriginalID    string
	DeclineReason DeclineReason
	// Hold is what an authorization still holds on the card (PENDING while
	// it is above 0); Settled is what was settled of it, Refunded what was
	// refunded of that.
	Hold     int64
	Settled  int64
	Refunded int64
	// DebtID and Debt are the part of Fee that neither the card nor the
	// wallet could pay: the debt it raised.
	DebtID      string
	Debt        int64
	CreatedAt   time.Time
	CompletedAt *time.Time
}

// Open reports whether the transaction waits for the issuer.
func (t Transaction) Open() bool { return t.Status == TxProcessing }

// Reveal is the audit record of one reveal of a card's number and CVV.
type Reveal struct {
	ID        string // UUID v7
	CompanyID string
	CardID    string
	// KeyID is the master key that sealed the secrets revealed.
	KeyID     string
	SourceIP  string
	UserAgent string
	RequestID string
	CreatedAt time.Time
}

// Accept is the acceptance of a movement, written as one transaction.
type Accept struct {
	// New is an issuance: Card is put as a new PENDING card, and takes one
	// of the company's Slots (ErrNoSlots when its live cards fill them).
	New   bool
	Slots int
	// Card is the card; unless New, its balance moves by Tx.CardDelta
	// (never below 0: ErrInsufficientCard) and its status must be one of
	// From (else ErrNotActive).
	Card Card
	From []Status
	// Tx is the new PROCESSING card transaction.
	Tx Transaction
	// Wallet is the change of the USD wallet, with its ledger Entries
	// (ErrInsufficientWallet when payout_available cannot cover it).
	Wallet  wallets.Adjustment
	Entries []wallets.Transaction
	Events  []events.Event
	Now     time.Time
}

// Issued is what the issuer gave for a new card.
type Issued struct {
	IssuerCardID string
	Last4        string
	ExpiryMonth  int
	ExpiryYear   int
	Number, CVV  vault.Sealed
}

// Settle is the settlement of an open card transaction, written as one
// transaction conditioned on Tx still being PROCESSING (else ErrChanged).
type Settle struct {
	// Tx is the transaction as it will be: its final Status, its deltas,
	// CompletedAt and, when FAILED, Error.
	Tx Transaction
	// CardChange is added to the card's balance; NewStatus, when set,
	// replaces its status, which must then be FromStatus; Issued, when
	// set, records the issuer's card.
	CardChange int64
	FromStatus Status
	NewStatus  Status
	Issued     *Issued
	// ReleaseSlot frees the card's slot (a failed issuance).
	ReleaseSlot bool
	Wallet      wallets.Adjustment
	Entries     []wallets.Transaction
	Events      []events.Event
	Now         time.Time
}

// Termination ends a card in one transaction: the card TERMINATED with
// balance 0 from Card.Status and Card.Balance as read (else ErrChanged),
// its slot released, its balance refunded to the wallet with its ledger
// entry, the TERMINATION card transaction and the events.
type Termination struct {
	Card Card
	// EventID, for a termination the issuer reported, is its event id,
	// claimed in the same transaction (ErrEventApplied when claimed).
	EventID string
	Tx      Transaction
	Wallet  wallets.Adjustment
	Entries []wallets.Transaction
	Events  []events.Event
	Now     time.Time
}

// Record is what one notification of the card network writes, as one
// transaction: the event claimed (ErrEventApplied when it was), the card's
// balance and holds moved, the new card transactions, the authorization
// they follow updated, the wallet's part of a fee or a refund with its
// ledger entries, the debt a fee left, and the events.
type Record struct {
	// EventID is the issuer's event id, claimed, naming the transaction
	// the event made: Made, or Txs[0]; "" for a write of ours (the holds a
	// termination reverses).
	EventID string
	Made    string
	// Card is the card as read. Its balance moves by BalanceDelta and its
	// holds by HeldDelta, on the condition that what it has available
	// (balance − holds) covers what they take from it (else
	// ErrCardRefused) and, when a positive BalanceDelta, that the card is
	// live (else ErrChanged).
	Card         Card
	BalanceDelta int64
	HeldDelta    int64
	// Approve also requires the card to be ACTIVE and not locked (else
	// ErrCardRefused): an authorization's decision.
	Approve bool
	// Txs are the new transactions; Txs[0] is what the event made. An
	// authorization's IssuerTxID is recorded so that what follows it can
	// find it.
	Txs []Transaction
	// Original, when set, is the authorization followed, as read; it
	// becomes OriginalAfter on the condition that its Hold, Settled and
	// Refunded are still as read (else ErrChanged).
	Original      *Transaction
	OriginalAfter *Transaction
	// WalletID is the USD wallet; Wallet its change (a fee taken: on the
	// condition that payout_available covers it, else ErrChanged) and
	// Entries its ledger entries.
	WalletID string
	Wallet   wallets.Adjustment
	Entries  []wallets.Transaction
	// Debt is the part of a fee neither the card nor the wallet could pay.
	Debt   *debts.Debt
	Events []events.Event
	Now    time.Time
}

// Outcome is what became of an issuer event: the transaction it made, or
// the code of its refusal (RefusalCode).
type Outcome struct {
	TxID    string
	Refused string
}

// ErrCardRefused is a Record whose conditions on the card failed: the card
// cannot approve the authorization, or no longer has what a fee takes.
var ErrCardRefused = errors.New("cards: the card refused the write")

// Store is the persistence the service needs.
type Store interface {
	TxLists // the transaction lists (txquery.go)
	// Accept writes a. ErrInsufficientWallet, ErrInsufficientCard,
	// ErrNoSlots, ErrNotFound or ErrNotActive (the card is not in a.From)
	// when a condition fails; ErrChanged when none of them explains it.
	Accept(ctx context.Context, a Accept) error
	// Settle writes s; ErrChanged when s.Tx is no longer PROCESSING.
	Settle(ctx context.Context, s Settle) error
	// Terminate writes t; ErrChanged when the card's status or balance is
	// no longer t.Card's.
	Terminate(ctx context.Context, t Termination) error
	// SetStatus moves card id from status from to status to, setting
	// is_locked, and returns the card as it is after; ErrChanged when its
	// status is not from, ErrNotFound when there is no such card.
	SetStatus(ctx context.Context, companyID, id string, from, to Status, locked bool, now time.Time) (Card, error)
	// CardCompany returns the company of a card id; ErrNotFound if none.
	CardCompany(ctx context.Context, id string) (string, error)
	// Card reads a card of the company; ErrNotFound if absent.
	Card(ctx context.Context, companyID, id string) (Card, error)
	// Cards reads every card of the company, oldest first.
	Cards(ctx context.Context, companyID string) ([]Card, error)
	// CustomerCards reads the company's cards of one customer.
	CustomerCards(ctx context.Context, companyID, customerID string) ([]Card, error)
	// Transaction reads a card transaction of the company.
	Transaction(ctx context.Context, companyID, id string) (Transaction, error)
	// Transactions reads every card transaction of the company (the ledger
	// check).
	Transactions(ctx context.Context, companyID string) ([]Transaction, error)
	// OpenTransactions returns up to limit PROCESSING transactions, of any
	// company, accepted before cutoff (the sweeper).
	OpenTransactions(ctx context.Context, cutoff time.Time, limit int) ([]Transaction, error)
	// SlotsUsed reads the company's count of live cards.
	SlotsUsed(ctx context.Context, companyID string) (int, error)
	// PutReveal writes a reveal's audit record.
	PutReveal(ctx context.Context, r Reveal) error
	// Record writes r (see Record); the refusals it names.
	Record(ctx context.Context, r Record) error
	// Refuse records that issuer event eventID was refused with code;
	// ErrEventApplied when the event was claimed already.
	Refuse(ctx context.Context, companyID, eventID, code string, now time.Time) error
	// Outcome reads what became of issuer event eventID; found is false
	// while it has not been applied.
	Outcome(ctx context.Context, companyID, eventID string) (o Outcome, found bool, err error)
	// NetworkTransaction reads the company's card transaction recorded
	// for the network's transaction id; ErrTransactionNotFound if none.
	NetworkTransaction(ctx context.Context, companyID, issuerTxID string) (Transaction, error)
	// OpenHolds reads the card's authorizations whose hold is open.
	OpenHolds(ctx context.Context, companyID, cardID string) ([]Transaction, error)
	// Reveals reads page p of a card's reveal records, newest first.
	Reveals(ctx context.Context, companyID, cardID string, p httpapi.PageRequest) (httpapi.PageResult[Reveal], error)
}
