package cards

import (
	"context"
	"errors"
	"time"

	"payments/pkg/debts"
	"payments/pkg/events"
	"payments/pkg/page"
	"payments/pkg/vault"
	"payments/pkg/wallets"
)

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
	// (wallets.ErrInsufficientWalletBalance when payout_available cannot
	// cover it).
	Wallet  wallets.Adjustment
	Entries []wallets.Transaction
	Events  []events.Event
	Now     time.Time
	// Receipt is recorded with the request's effect, when it holds an
	// Idempotency-Key: what a retry answers from (replayMove).
	Receipt []byte
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

// Termination ends a card in one transaction, whatever its history: the
// card TERMINATED from Card.Status, Card.Balance and Card.Held as read
// (else ErrChanged), keeping only what its open holds keep (Card.Held, on
// which nothing can be spent any more: released to the wallet by the
// sweeper, FinishTermination, or settled meanwhile), its slot released,
// what nothing holds (Card.Available) refunded to the wallet with its
// ledger entry, the TERMINATION card transaction and the events.
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
	// the event made (Made, or Txs[0]) and what it moved on the card (its
	// Outcome); "" for a write of ours (the holds a termination reverses).
	EventID string
	Made    string
	// Card is the card as read. Its balance moves by BalanceDelta and its
	// holds by HeldDelta, on the condition that what it has available
	// (balance − holds) covers what they take from it (else
	// ErrCardRefused) and, when they add to its balance or to what it has
	// available (a refund, a hold released), that the card is live (else
	// ErrChanged): money never stays on a terminated card.
	Card         Card
	BalanceDelta int64
	HeldDelta    int64
	// Approve also requires the card to be ACTIVE and not locked (else
	// ErrCardRefused): an authorization's decision. Forced drops the
	// condition on what the card has available: the issuer's word (an
	// approval it made without us holds what it holds).
	Approve bool
	Forced  bool
	// Txs are the new transactions; Txs[0] is what the event made, unless
	// the event changed Original alone (Made then names it). An
	// authorization's IssuerTxID is recorded so that what follows it can
	// find it.
	Txs []Transaction
	// Original, when set, is the authorization followed, as read; it
	// becomes OriginalAfter on the condition that its Type, Hold, Settled
	// and Refunded are still as read (else ErrChanged). OriginalAfter may
	// be of another type: an approval the network declined becomes a
	// DECLINE, with its reason.
	Original      *Transaction
	OriginalAfter *Transaction
	// OriginalEvents is the number of events about Original written
	// before (its decision's): Events about it are numbered after them.
	OriginalEvents int64
	// Untold keeps Original in the open hold index once its hold is
	// released, until the issuer is told (Store.HoldTold): an expiry,
	// which no queue delivers again when telling fails.
	Untold bool
	// Withdraw, when set, takes back the events of the decision that
	// Original records (an approval of ours that the network, no longer
	// waiting, declined on its own): each is deleted on the condition
	// that it was never published nor handed to the webhook worker, nor
	// followed by another event about its object (else ErrEventsKept), its
	// number given back, and the decision's claim names Events instead.
	Withdraw *Withdrawal
	// WalletID is the USD wallet; Wallet its change (a fee taken: on the
	// condition that the wallet is active and its payout_available covers it,
	// else ErrChanged) and
	// Entries its ledger entries.
	WalletID string
	Wallet   wallets.Adjustment
	Entries  []wallets.Transaction
	// Debt is the part of a fee neither the card nor the wallet could pay.
	Debt   *debts.Debt
	Events []events.Event
	Now    time.Time
}

// made returns the card transaction r made: Made, or its first.
func (r Record) made() string {
	if r.Made != "" || len(r.Txs) == 0 {
		return r.Made
	}
	return r.Txs[0].ID
}

// Withdrawal is the events of a decision taken back (Record.Withdraw):
// Claim is the decision's claim (the authorization's id), EventIDs the
// events it wrote.
type Withdrawal struct {
	Claim    string
	EventIDs []string
}

// ErrEventsKept is a Withdrawal of events that cannot be taken back: one
// was published already, or another event about its object followed it.
// Nothing is written.
var ErrEventsKept = errors.New("cards: the decision's events cannot be taken back")

// Outcome is what became of an issuer event: the transaction it made, or
// the code of its refusal (RefusalCode), what the write that claimed it
// moved on the card (BalanceDelta and HeldDelta, as in its Record) and
// the ids of the events it wrote.
type Outcome struct {
	TxID                    string
	Refused                 string
	BalanceDelta, HeldDelta int64
	EventIDs                []string
}

// ErrCardRefused is a Record whose conditions on the card failed: the card
// cannot approve the authorization, or no longer has what a fee takes.
var ErrCardRefused = errors.New("cards: the card refused the write")

// Store is the persistence the service needs.
type Store interface {
	TxLists      // the transaction lists (txquery.go)
	DisputeStore // the disputes (disputes.go)
	// Accept writes a. wallets.ErrInsufficientWalletBalance,
	// ErrInsufficientCard, ErrNoSlots, ErrNotFound or ErrNotActive (the
	// card is not in a.From) when a condition fails; ErrChanged when none
	// of them explains it.
	Accept(ctx context.Context, a Accept) error
	// Settle writes s; ErrChanged when s.Tx is no longer PROCESSING.
	Settle(ctx context.Context, s Settle) error
	// Terminate writes t; ErrChanged when the card's status, balance or
	// holds are no longer t.Card's. A card that keeps money for its open
	// holds is then among those Terminating returns until
	// TerminationDone.
	Terminate(ctx context.Context, t Termination) error
	// Terminating returns up to limit terminated cards, of any company,
	// terminated before cutoff, that still keep money for open holds (the
	// sweeper releases them).
	Terminating(ctx context.Context, cutoff time.Time, limit int) ([]Card, error)
	// TerminationDone records that terminated card id keeps nothing any
	// more: Terminating no longer returns it. ErrChanged when it still
	// keeps money.
	TerminationDone(ctx context.Context, companyID, id string) error
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
	// HoldsBefore returns up to limit authorizations, of any company,
	// whose hold is open and that were created before cutoff (the
	// sweeper expires them).
	HoldsBefore(ctx context.Context, cutoff time.Time, limit int) ([]Transaction, error)
	// HoldTold takes authorization id, its hold released, out of the open
	// hold index; nothing when its hold is not 0.
	HoldTold(ctx context.Context, companyID, id string) error
	// SlotsUsed reads the company's count of live cards.
	SlotsUsed(ctx context.Context, companyID string) (int, error)
	// CardSecrets reads the sealed number and CVV of card id of the
	// company, strongly consistent: from their own item (no index sees
	// it), else from the card item of a card issued before they moved
	// there; an error when the card has neither.
	CardSecrets(ctx context.Context, companyID, id string) (Secrets, error)
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
	// HoldsAfter reads a page of at most limit of the card's
	// transactions, oldest first, after transaction after ("" from the
	// first), and returns the authorizations among them whose hold is
	// open, and the id to read the next page after ("" after the last).
	HoldsAfter(ctx context.Context, companyID, cardID, after string, limit int) (holds []Transaction, next string, err error)
	// Reveals reads page p of a card's reveal records, newest first.
	Reveals(ctx context.Context, companyID, cardID string, p page.Request) (page.Result[Reveal], error)
}
