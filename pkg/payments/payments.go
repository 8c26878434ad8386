// Package payments holds payment transactions: payouts (wallet to mobile
// money) and collections (mobile money to wallet), their state machine, the
// worker that submits them to the operator and polls it, the sweeper's part
// (re-submitting what a crash left behind, timing out what the operator
// never confirmed), the transaction queries and their HTTP routes.
//
// A payout is accepted by one atomic write that reserves amount + fee on the
// wallet's payout balance (see docs/payments.md). Every later transition is
// another atomic write conditioned on the payment's current status, so each
// transition happens once whatever the queue delivers: duplicate, late or
// reordered messages find the status moved on and do nothing.
package payments

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/guideline"
	"payments/pkg/providers/operator"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// Errors of this package; pkg/app maps them to HTTP.
var (
	// ErrNotFound is a payment transaction that does not exist for the
	// caller's company.
	ErrNotFound = errors.New("payments: transaction not found")
	// ErrInsufficientBalance is a payout whose amount plus fee exceeds the
	// wallet's available payout balance.
	ErrInsufficientBalance = errors.New("payments: insufficient balance including fees")
	// ErrDuplicateExternalID is an external_id the company has already used
	// for a payout or a collection.
	ErrDuplicateExternalID = errors.New("payments: duplicate external_id")
	// ErrNoWallet is a payment in a (currency, country) for which the
	// company has no wallet.
	ErrNoWallet = errors.New("payments: no wallet for this country and currency")
	// ErrOperatorUnavailable is an operator the payment guideline does not
	// list for the country and currency.
	ErrOperatorUnavailable = errors.New("payments: operator not available for this country and currency")
	// ErrNoOperator is a payout or collection asked of a deployment that has
	// no operator gateway (production mode before a real aggregator adapter
	// exists). It is refused before anything is written.
	ErrNoOperator = errors.New("payments: no operator is configured")
	// ErrBusy is an acceptance that DynamoDB cancelled for conflicting
	// transactions every time it was tried; the client may retry with the
	// same external_id, safely.
	ErrBusy = errors.New("payments: wallet busy")
	// ErrStatusChanged is a transition whose payment is no longer in the
	// status it was read in: another delivery made the transition first.
	// The worker treats it as done.
	ErrStatusChanged = errors.New("payments: status changed since it was read")
)

// Type tells a payout from a collection (spec §2.7).
type Type string

// Payment transaction types.
const (
	TypePayout     Type = "PAYOUT"
	TypeCollection Type = "COLLECTION"
)

// Types lists the payment transaction types.
var Types = []Type{TypeCollection, TypePayout}

// Status is where a payment transaction stands (spec §3.1, §3.2).
type Status string

// Payment statuses. SUCCESS and FAILED are terminal.
const (
	StatusPending    Status = "PENDING"
	StatusProcessing Status = "PROCESSING"
	StatusSuccess    Status = "SUCCESS"
	StatusFailed     Status = "FAILED"
)

// Statuses lists the payment statuses.
var Statuses = []Status{StatusPending, StatusProcessing, StatusSuccess, StatusFailed}

// Terminal reports whether s is SUCCESS or FAILED.
func (s Status) Terminal() bool { return s == StatusSuccess || s == StatusFailed }

// Timeout is how long a payment may stay non-terminal: after it, it fails
// with TimeoutMessage and a payout's reservation is released (spec §4.16).
const Timeout = 15 * time.Minute

// TimeoutMessage is the error_message of a payment that timed out.
const TimeoutMessage = "operator did not confirm within 15 minutes"

// Payment is a payout or a collection. Amounts are minor units of Currency.
type Payment struct {
	// ID is a UUID v7 whose timestamp is CreatedAt, so ids sort by time.
	ID         string
	CompanyID  string
	ExternalID string
	Type       Type
	Status     Status
	// Amount excludes the fee. A payout reserves, then deducts, Amount +
	// Fee; a collection credits Amount − Fee.
	Amount      int64
	Fee         int64
	Currency    string
	Country     string
	Operator    string
	PhoneNumber string
	Reason      string
	// Description echoes the request's purpose.
	Description string
	ReferenceID string
	Lang        string
	NotifyURL   string
	// WalletID is the wallet of (Currency, Country) at acceptance.
	WalletID string
	// EntryID is the payout's WITHDRAW ledger entry (the reservation);
	// empty for a collection.
	EntryID string
	// OrderID is the operator's reference, known once submitted.
	OrderID      string
	ErrorMessage string
	// Upstream is the operator's last raw answer.
	Upstream    json.RawMessage
	CreatedAt   time.Time
	UpdatedAt   time.Time
	CompletedAt *time.Time
}

// Total is Amount + Fee: what a payout reserves and finally deducts.
func (p Payment) Total() int64 { return p.Amount + p.Fee }

// Net is Amount − Fee: what a successful collection credits.
func (p Payment) Net() int64 { return p.Amount - p.Fee }

// Deadline is when a non-terminal payment times out.
func (p Payment) Deadline() time.Time { return p.CreatedAt.Add(Timeout) }

// Ref names a payment found by the sweeper.
type Ref struct {
	CompanyID string
	ID        string
	CreatedAt time.Time
}

// EntryChange is the change of an existing ledger entry (a payout's
// reservation) that a transition makes, conditioned on the entry still
// being in status From.
type EntryChange struct {
	ID       string
	From, To wallets.Status
	Delta    int64
	Reserved int64
	// BalanceBefore and BalanceAfter are nil when the entry moved nothing.
	BalanceBefore, BalanceAfter *int64
	OrderID                     string
	CompletedAt                 *time.Time
}

// Transition is one atomic change of a payment's status with everything
// that goes with it.
type Transition struct {
	// From is the status the payment must still be in.
	From Status
	// Payment is the payment after the transition.
	Payment Payment
	// Wallet, when not nil, is the wallet as read: Adjust is applied on
	// the condition that it is still at Wallet.Version (so that the
	// balances before and after written in the ledger are exact).
	Wallet *wallets.Wallet
	Adjust wallets.Adjustment
	// Entry, when not nil, changes the payout's reservation entry.
	Entry *EntryChange
	// NewEntries are ledger entries written by the transition (REFUND,
	// DEPOSIT).
	NewEntries []wallets.Transaction
	// Event is the status-update event, written to the outbox.
	Event events.Event
	// Now is the wallet's updated_at.
	Now time.Time
}

// Store is the persistence of payment transactions.
type Store interface {
	// CreatePayout writes, in one transaction: the wallet's reservation
	// (payout_reserved += total on the condition payout_available >=
	// total and is_active), the payment, the claim of its external_id,
	// the reservation entry and the event. Errors: ErrInsufficientBalance,
	// wallets.ErrInactive, wallets.ErrNotFound, ErrDuplicateExternalID,
	// ErrBusy.
	CreatePayout(ctx context.Context, p Payment, reservation wallets.Transaction, ev events.Event) error
	// CreateCollection writes the payment, the claim of its external_id and
	// the event in one transaction; ErrDuplicateExternalID when taken.
	CreateCollection(ctx context.Context, p Payment, ev events.Event) error
	// GetPayment reads a payment of the company, strongly consistent;
	// ErrNotFound if absent.
	GetPayment(ctx context.Context, companyID, id string) (Payment, error)
	// ListPayments returns the company's payments created in [from, to)
	// (zero bounds are open), newest first.
	ListPayments(ctx context.Context, companyID string, from, to time.Time) ([]Payment, error)
	// ApplyTransition writes t in one transaction: ErrStatusChanged when
	// the payment is no longer in t.From, wallets.ErrStale when the wallet
	// moved past t.Wallet.Version or DynamoDB cancelled for a conflict.
	ApplyTransition(ctx context.Context, t Transition) error
	// OpenPayments returns up to limit non-terminal payments of every
	// company created before cutoff, oldest first (eventually consistent).
	OpenPayments(ctx context.Context, cutoff time.Time, limit int) ([]Ref, error)
}

// Wallets reads the wallets a payment moves.
type Wallets interface {
	// ListWallets returns every wallet of the company.
	ListWallets(ctx context.Context, companyID string) ([]wallets.Wallet, error)
	// GetWallet reads a wallet of the company, strongly consistent.
	GetWallet(ctx context.Context, companyID, walletID string) (wallets.Wallet, error)
}

// Fees prices payments.
type Fees interface {
	Quote(ctx context.Context, companyID, typ, operator, country, currency string, amount int64) (fees.Quote, error)
}

// Jobs sends messages to the payouts queue, visible after delay.
type Jobs interface {
	Send(ctx context.Context, body []byte, delay time.Duration) error
}

// Publisher publishes committed events (outbox.Publisher).
type Publisher interface {
	Publish(ctx context.Context, evs ...events.Event) error
}

// Deps are what a Service works with.
type Deps struct {
	Store   Store
	Wallets Wallets
	Fees    Fees
	// Gateway is the operator; the payments function uses it for
	// doubleCheck, the worker to submit and poll.
	Gateway operator.Gateway
	// Jobs is the payouts queue.
	Jobs Jobs
	// Events publishes the outbox events after commit.
	Events Publisher
	// Guideline is the payment guideline (default: the embedded one).
	Guideline *guideline.Guideline
}

// Service accepts, processes and reads payment transactions.
type Service struct {
	store   Store
	wallets Wallets
	fees    Fees
	gateway operator.Gateway
	jobs    Jobs
	events  Publisher
	guide   *guideline.Guideline
	// Now returns the current time; tests may replace it.
	Now func() time.Time
	// Backoff returns how long to wait before retry n (1-based) of a
	// transition that lost a race for its wallet; tests may replace it.
	Backoff func(n int) time.Duration
}

// NewService returns a Service over d.
func NewService(d Deps) *Service {
	g := d.Guideline
	if g == nil {
		g = guideline.Default()
	}
	return &Service{
		store:   d.Store,
		wallets: d.Wallets,
		fees:    d.Fees,
		gateway: d.Gateway,
		jobs:    d.Jobs,
		events:  d.Events,
		guide:   g,
		Now:     time.Now,
		Backoff: backoff,
	}
}

// Guideline returns the payment guideline the service checks against.
func (s *Service) Guideline() *guideline.Guideline { return s.guide }

// now returns the current time in UTC at millisecond precision, the
// precision timestamps are stored with.
func (s *Service) now() time.Time { return timestamp.Of(s.Now()) }

// publish hands committed events to the publisher. A failure only delays
// them: the sweeper publishes what stays unpublished.
func (s *Service) publish(ctx context.Context, evs ...events.Event) {
	if s.events == nil || len(evs) == 0 {
		return
	}
	if err := s.events.Publish(ctx, evs...); err != nil {
		slog.WarnContext(ctx, "publish events after commit; the sweeper will", "error", err)
	}
}

// backoff waits a random time of up to 5 ms per attempt, at most 100 ms.
func backoff(n int) time.Duration {
	ceiling := min(time.Duration(n)*5*time.Millisecond, 100*time.Millisecond)
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
