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
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"payments/pkg/contention"
	"payments/pkg/customers"
	"payments/pkg/money"
	"payments/pkg/providers/issuer"
	"payments/pkg/vault"
)

// Errors of this package; the catalogue (pkg/function/errors.go) maps them to HTTP (spec §7).
var (
	ErrNotFound = errors.New("cards: card not found")
	// ErrCustomerNotFound is customers.ErrNotFound: a customer the
	// company does not have.
	ErrCustomerNotFound    = customers.ErrNotFound
	ErrCustomerNotVerified = errors.New("cards: customer KYC not verified")
	ErrNoSlots             = errors.New("cards: no card slots available")
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
	// ErrRevealLimitExceeded is a reveal past the company's hourly quota:
	// nothing is revealed. The error returned is a *RevealLimitError.
	ErrRevealLimitExceeded = errors.New("cards: reveal limit exceeded")
	// ErrEventApplied is an issuer notification applied before: nothing
	// was written again.
	ErrEventApplied = errors.New("cards: issuer event already applied")
	// ErrChanged is a card that another request changed first; the
	// request may be repeated. It is a contention.ErrConflict, and
	// answered as one.
	ErrChanged = fmt.Errorf("cards: card changed by another request: %w", contention.ErrConflict)
)

// Currency is the currency of every card.
const Currency = "USD"

// moneyJSON returns cents as an amount of the events.
func moneyJSON(cents int64) json.Number { return money.JSON(cents, Currency) }

// optional returns &s, nil when s is empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

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
	IssuerCardID string
	// Sealed is what the card's item keeps of its sealed number and CVV,
	// which live in an item of their own (Store.CardSecrets): zero until
	// the issuer has issued the card, and for a card whose issuer keeps
	// them (Stripe).
	Sealed SealedRefs
	// Held is the sum of the card's open authorization holds: the part of
	// Balance that cannot be spent again (spec §4.19's available_balance is
	// Balance − Held).
	Held int64
	// IsLocked is the deeper lock of PUT /cards/{id}/freeze?lock=true.
	IsLocked  bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SealedRefs names a card's sealed number and CVV without holding them:
// the master key that sealed them (recorded by each reveal's audit) and
// their opaque tokens (vault.Sealed.Token, which the API shows in their
// place). Nothing of it is secret.
type SealedRefs struct {
	KeyID                 string
	NumberToken, CVVToken string
}

// RefsOf returns the refs of a card's sealed number and CVV; zero when
// nothing is sealed.
func RefsOf(number, cvv vault.Sealed) SealedRefs {
	if number.IsZero() {
		return SealedRefs{}
	}
	return SealedRefs{KeyID: number.KeyID, NumberToken: number.Token(), CVVToken: cvv.Token()}
}

// IsZero reports whether nothing of the card is sealed.
func (r SealedRefs) IsZero() bool { return r.KeyID == "" && r.NumberToken == "" }

// Secrets are a card's sealed number and CVV, as read for a reveal
// (Store.CardSecrets) or written at its issuance (Issued).
type Secrets struct {
	Number, CVV vault.Sealed
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
	// TxDispute is ours: a change of what the card issuer credited for a
	// dispute of a settlement (disputes.go), a credit to the card (or to
	// the wallet of a terminated card) or the credit taken back.
	TxDispute TxType = "DISPUTE"
)

// TxTypes lists the card transaction types.
var TxTypes = []TxType{TxAuthorization, TxSettlement, TxFunding, TxWithdrawal, TxTermination, TxDecline, TxReversal, TxRefund, TxCrossBorder, TxDispute}

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

// Decline reasons (declineReason says which applies).
const (
	DeclineTerminated   DeclineReason = "card_terminated"
	DeclineInactive     DeclineReason = "card_inactive"
	DeclineLocked       DeclineReason = "card_locked"
	DeclineFrozen       DeclineReason = "card_frozen"
	DeclineInsufficient DeclineReason = "insufficient_funds"
	// DeclineIssuerTimeout is the network's own decline, when our decision
	// was late or missing (issuer.StandInReason).
	DeclineIssuerTimeout DeclineReason = issuer.StandInReason
)

// Merchant is where a card was used.
type Merchant struct {
	Name    string
	City    string
	Country string // ISO 3166-1 alpha-2
}

// Text is the description of a transaction at m: its name and city.
func (m Merchant) Text() string {
	switch {
	case m.City == "":
		return m.Name
	case m.Name == "":
		return m.City
	}
	return m.Name + ", " + m.City
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
	// Expired marks an authorization whose hold its expiry released: it
	// may still be captured (a settlement with nothing held) until a final
	// settlement closes it.
	Expired bool
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
