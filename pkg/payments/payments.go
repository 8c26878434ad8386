// Package payments holds payment transactions: payouts (wallet to mobile
// money) and collections (mobile money to wallet), their state machine, the
// worker that submits them to the operator and polls it, the sweeper's part
// (resuming work whose message was lost), reconciliation of payments the
// operator never confirmed, the transaction queries and their HTTP routes.
//
// A payout is accepted by one atomic write that reserves amount + fee on the
// wallet's payout balance (see docs/payments.md). Every later transition is
// another atomic write conditioned on the payment's current status, so each
// transition happens once whatever the queue delivers: duplicate, late or
// reordered messages find the status moved on and do nothing.
//
// A payment becomes FAILED, and a payout's reservation is released, only on
// a definitive answer: the operator's, or the operator console's after a
// reconciliation. Time alone never fails a payment: one the operator has not
// confirmed by the deadline is flagged reconciliation_required, keeps its
// funds reserved and is polled until ReconcileWindow after acceptance.
package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/cache"
	"payments/pkg/contention"
	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/guideline"
	"payments/pkg/providers/operator"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// Errors of this package; the catalogue (pkg/function/errors.go) maps them to HTTP.
var (
	// ErrNotFound is a payment transaction that does not exist for the
	// caller's company.
	ErrNotFound = errors.New("payments: transaction not found")
	// ErrDuplicateExternalID is an external_id the company has already used
	// for a payout or a collection.
	ErrDuplicateExternalID = errors.New("payments: duplicate external_id")
	// ErrNoWallet is a payment in a (currency, country) for which the
	// company has no wallet.
	ErrNoWallet = errors.New("payments: no wallet for this country and currency")
	// ErrNoOperator is a payout or collection asked of a deployment that has
	// no operator gateway (production mode before a real aggregator adapter
	// exists). It is refused before anything is written.
	ErrNoOperator = errors.New("payments: no operator is configured")
	// ErrStatusChanged is a transition whose payment is no longer in the
	// state it was read in: another delivery made the transition first.
	// The worker treats it as done; a client is answered as for a
	// contention.ErrConflict, which it wraps.
	ErrStatusChanged = fmt.Errorf("payments: status changed since it was read: %w", contention.ErrConflict)
	// ErrFinal is a console resolution of a payment that is already SUCCESS
	// or FAILED.
	ErrFinal = errors.New("payments: transaction is already final")
	// ErrNotFlagged is a console resolution of a payment that is not
	// flagged for reconciliation: the worker is still handling it.
	ErrNotFlagged = errors.New("payments: transaction does not require reconciliation")
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

// Submission is what is known of whether the operator may have a payment.
type Submission string

// Submission states. A payment is accepted NotSubmitted; the worker records
// Submitting before it first calls the operator with it, so a payment still
// NotSubmitted provably never reached the operator. A payment accepted
// before submissions were recorded has neither (""), and is treated as one
// the operator may have.
const (
	NotSubmitted Submission = "NOT_SUBMITTED"
	Submitting   Submission = "SUBMITTING"
)

// NotSentMessage is the error_message of a payment failed because it was
// still not sent to the operator when its deadline passed (see
// Service.HandleJob): nothing was paid or collected, and a payout's
// reservation is released.
const NotSentMessage = "not sent to the operator before the payment deadline; no money moved"

// DefaultDeadline is how long after acceptance the operator is expected to
// give a final answer (spec §4.16: 15 minutes); PAYMENT_DEADLINE_SECONDS
// sets another. An item of a bulk batch counts it from when it was written
// as a payout (Payment.Written). A payment still not final then is flagged for
// reconciliation: it is not failed.
const DefaultDeadline = 15 * time.Minute

// ReconcileWindow is how long after acceptance (Payment.Written) a payment
// flagged for reconciliation is still polled; after it only the operator
// console resolves it.
const ReconcileWindow = 72 * time.Hour

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
	// empty for a collection and for an item of a bulk batch.
	EntryID string
	// BatchID is the bulk batch the payout is an item of, if any.
	BatchID string
	// BatchEntryID is, for an item of a bulk batch, the batch's
	// reservation entry on the payout's wallet (wallets.TypeBulkPayout):
	// the item's total is held there, not on an entry of its own, and the
	// item draws it out when it settles.
	BatchEntryID string
	// OrderID is the operator's reference, known once submitted.
	OrderID string
	// Submission says whether the operator may have the payment.
	Submission   Submission
	ErrorMessage string
	// Upstream is the operator's last raw answer.
	Upstream json.RawMessage
	// ReconciliationRequired is set on a payment the operator has not
	// confirmed by its deadline; it is cleared when the payment is final.
	ReconciliationRequired bool
	// NextPollAt is when the worker expects to handle the payment next
	// (submit it, or ask the operator about it): the sweeper resumes a
	// payment whose NextPollAt has long passed. Zero once the worker has
	// stopped: the payment is final, or past ReconcileWindow.
	NextPollAt time.Time
	// Resolution is the operator console's decision, when it made one.
	Resolution *Resolution
	// CorrelationID is the id of the request that accepted the payment
	// (pkg/correlation): the work that follows logs with it, whatever
	// started that work (a poll, an operator's callback, the sweeper).
	CorrelationID string
	CreatedAt     time.Time
	// WrittenAt is when an item of a bulk batch was written as a payout
	// (its chunk job), after the batch's acceptance, which is its
	// CreatedAt; zero for a payment accepted alone, written when it was
	// accepted. See Written.
	WrittenAt   time.Time
	UpdatedAt   time.Time
	CompletedAt *time.Time
}

// Written returns when p was written as a payment: WrittenAt for an item
// of a bulk batch, else CreatedAt. Its deadline, its polling schedule and
// its reconciliation window count from it, so that an item written late
// (its chunk job behind other work) has the time a payout accepted alone
// has, while its CreatedAt stays the acceptance that reserved its money
// and gave it its id.
func (p Payment) Written() time.Time {
	if p.WrittenAt.IsZero() {
		return p.CreatedAt
	}
	return p.WrittenAt
}

// Resolution is how the operator console settled a payment flagged for
// reconciliation: who, why and when.
type Resolution struct {
	Status Status
	Note   string
	By     string
	At     time.Time
}

// Total is Amount + Fee: what a payout reserves and finally deducts.
func (p Payment) Total() int64 { return p.Amount + p.Fee }

// Net is Amount − Fee: what a successful collection credits.
func (p Payment) Net() int64 { return p.Amount - p.Fee }

// Ref names a payment found by the sweeper.
type Ref struct {
	CompanyID string
	ID        string
}

// EntryChange is the change of an existing ledger entry (a payout's
// reservation) that a transition makes, conditioned on the entry still
// being in status From.
type EntryChange struct {
	ID       string
	From, To wallets.Status
	// Delta is what the entry now applies to the payout balance; when it is
	// not 0 the store also writes the balances before and after.
	Delta int64
	// Held is what the entry held in payout_reserved in From, Reserved
	// what it holds in To while open.
	Held        int64
	Reserved    int64
	OrderID     string
	CompletedAt *time.Time
}

// Transition is one atomic change of a payment's status with everything
// that goes with it.
type Transition struct {
	// From is the status the payment must still be in.
	From Status
	// Flagged also requires the payment to be flagged for reconciliation
	// (a console resolution).
	Flagged bool
	// Payment is the payment after the transition.
	Payment Payment
	// Adjust is the change of the payment's wallet (none when zero).
	Adjust wallets.Adjustment
	// Entry, when not nil, changes the payout's reservation entry.
	Entry *EntryChange
	// Draw, when not nil, takes a bulk item's total out of its batch's
	// reservation entry (Payment.BatchEntryID).
	Draw *wallets.EntryDraw
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
	Lister
	// CreatePayout writes, in one transaction: the wallet's reservation
	// (payout_reserved += total on the condition payout_available >=
	// total and is_active), the payment, the claim of its external_id,
	// the reservation entry and the event. Errors:
	// wallets.ErrInsufficientBalance, wallets.ErrInactive,
	// wallets.ErrNotFound, ErrDuplicateExternalID.
	CreatePayout(ctx context.Context, p Payment, reservation wallets.Transaction, ev events.Event) error
	// CreateCollection writes the payment, the claim of its external_id and
	// the event in one transaction; ErrDuplicateExternalID when taken.
	CreateCollection(ctx context.Context, p Payment, ev events.Event) error
	// GetPayment reads a payment of the company, strongly consistent;
	// ErrNotFound if absent.
	GetPayment(ctx context.Context, companyID, id string) (Payment, error)
	// PaymentByID reads a payment of any company by its id alone (the
	// operator console), strongly consistent; ErrNotFound if absent.
	PaymentByID(ctx context.Context, id string) (Payment, error)
	// ApplyTransition writes t in one transaction: ErrStatusChanged when
	// the payment is no longer in t.From (or no longer flagged, with
	// t.Flagged, or no longer NotSubmitted when t.Payment is).
	ApplyTransition(ctx context.Context, t Transition) error
	// MarkSubmitting records that the worker is about to send the payment
	// to the operator (Submission becomes Submitting), on the condition
	// that it is still PENDING; ErrStatusChanged otherwise.
	MarkSubmitting(ctx context.Context, companyID, id string) error
	// Reschedule writes p's NextPollAt and ReconciliationRequired, on the
	// condition that the payment is still in p.Status with NextPollAt
	// prevDue (none, for a zero prevDue: a payment from before NextPollAt
	// is adopted), and still NotSubmitted when p is; ErrStatusChanged
	// otherwise.
	Reschedule(ctx context.Context, p Payment, prevDue time.Time) error
	// DuePayments returns up to limit non-terminal payments of every
	// company whose NextPollAt is before cutoff (eventually consistent:
	// the caller reads each again).
	DuePayments(ctx context.Context, cutoff time.Time, limit int) ([]Ref, error)
	// FlaggedPayments returns a page of the payments of every company
	// flagged for reconciliation, oldest first: up to limit after the
	// payment id after ("" for the first page), and the after of the next
	// page ("" on the last).
	FlaggedPayments(ctx context.Context, after string, limit int) ([]Payment, string, error)
	// CountFlaggedPayments returns the number of payments of every
	// company flagged for reconciliation (eventually consistent).
	CountFlaggedPayments(ctx context.Context) (int, error)
}

// Wallets reads the wallets a payment moves.
type Wallets interface {
	// WalletIDFor returns the id of the company's wallet of (currency,
	// country); wallets.ErrNotFound when it has none. Once there is one it
	// never changes (the Service keeps it).
	WalletIDFor(ctx context.Context, companyID, currency, country string) (string, error)
	// GetWallet reads a wallet of the company, strongly consistent;
	// wallets.ErrNotFound if absent.
	GetWallet(ctx context.Context, companyID, walletID string) (wallets.Wallet, error)
}

// Fees prices payments.
type Fees interface {
	Quote(ctx context.Context, companyID, typ, operator, country, currency string, amount int64) (fees.Quote, error)
}

// Jobs sends messages to a queue of the payout worker (the payouts queue,
// or the bulk payouts queue), visible after delay.
type Jobs interface {
	Send(ctx context.Context, body []byte, delay time.Duration) error
}

// Publisher publishes committed events (outbox.Publisher).
type Publisher interface {
	Publish(ctx context.Context, evs ...events.Event) error
}

// Deps are what a Service works with. NewService refuses a Deps without
// Store, Wallets, Fees, Gateway, Jobs, BulkJobs or Events.
type Deps struct {
	Store   Store
	Wallets Wallets
	Fees    Fees
	// Gateway is the operator; the payments function uses it for
	// doubleCheck, the worker to submit and poll. operator.None, where the
	// deployment has no operator adapter, refuses payouts and collections
	// before anything is written (ErrNoOperator) and never double-checks.
	Gateway operator.Gateway
	// Jobs is the payouts queue: the messages of the payouts and
	// collections accepted alone, and the events the payments function
	// relays (Relay).
	Jobs Jobs
	// BulkJobs is the bulk payouts queue, which the payout worker consumes
	// apart, with a bounded concurrency: every message this service sends
	// about an item of a bulk batch (Payment.BatchID), its submission and
	// its polls, goes there, so that a batch's items never wait in front of
	// the payouts of other companies (docs/bulk.md).
	BulkJobs Jobs
	// Events publishes the outbox events after commit: directly (the
	// payout worker, the sweeper), or through the payout worker (Relay,
	// the payments function). The events of an acceptance always travel
	// with its submit message (Job.Events), whatever Events is.
	Events Publisher
	// Guideline is the payment guideline (default: the embedded one).
	Guideline *guideline.Guideline
	// Deadline is how long after acceptance a payment is expected to be
	// final before it is flagged for reconciliation (default
	// DefaultDeadline, at most ReconcileWindow).
	Deadline time.Duration
	// Batches hears of the final transitions of the items of bulk batches
	// (bulk.Completer) and completes their batches. It needs neither this
	// service nor the bulk service built over it (only the batches' store
	// and a publisher), so it is built before both, and neither service is
	// told of the other after it is built.
	Batches BatchWatcher
	// Now is the clock (default time.Now); tests give one they move.
	Now func() time.Time
}

// Service accepts, processes and reads payment transactions.
type Service struct {
	store   Store
	wallets Wallets
	fees    Fees
	// gateway is nil for operator.None.
	gateway  operator.Gateway
	jobs     Jobs
	bulkJobs Jobs
	events   Publisher
	guide    *guideline.Guideline
	deadline time.Duration
	// walletIDs keeps the wallet id of each (company, currency, country)
	// found: it never changes once the wallet exists.
	walletIDs *cache.Cache[string]
	// batches hears of the final transitions of bulk items.
	batches BatchWatcher
	clock   func() time.Time
}

// BatchWatcher hears that an item of a bulk batch became final, so that
// the batch completes when its last item does (package bulk).
type BatchWatcher interface {
	ItemFinished(ctx context.Context, companyID, batchID string)
}

// NewService returns a Service over d, or an error naming the dependency
// d lacks: every one but Guideline, Deadline and Now is required.
func NewService(d Deps) (*Service, error) {
	switch {
	case d.Store == nil:
		return nil, errors.New("payments: no Store to build the service")
	case d.Wallets == nil:
		return nil, errors.New("payments: no Wallets to build the service")
	case d.Fees == nil:
		return nil, errors.New("payments: no Fees to build the service")
	case d.Gateway == nil:
		return nil, errors.New("payments: no Gateway to build the service (operator.None where there is no operator)")
	case d.Jobs == nil:
		return nil, errors.New("payments: no Jobs queue to build the service")
	case d.BulkJobs == nil:
		return nil, errors.New("payments: no BulkJobs queue to build the service")
	case d.Events == nil:
		return nil, errors.New("payments: no Events publisher to build the service")
	case d.Batches == nil:
		return nil, errors.New("payments: no Batches watcher to build the service")
	}
	if d.Gateway == operator.None {
		d.Gateway = nil
	}
	return newService(d), nil
}

// newService returns a Service over d as it is.
func newService(d Deps) *Service {
	g := d.Guideline
	if g == nil {
		g = guideline.Default()
	}
	deadline := d.Deadline
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	deadline = min(deadline, ReconcileWindow)
	clock := d.Now
	if clock == nil {
		clock = time.Now
	}
	return &Service{
		store:     d.Store,
		wallets:   d.Wallets,
		fees:      d.Fees,
		gateway:   d.Gateway,
		jobs:      d.Jobs,
		bulkJobs:  d.BulkJobs,
		events:    d.Events,
		guide:     g,
		deadline:  deadline,
		walletIDs: cache.New[string](0, time.Now),
		batches:   d.Batches,
		clock:     clock,
	}
}

// Guideline returns the payment guideline the service checks against.
func (s *Service) Guideline() *guideline.Guideline { return s.guide }

// deadlineOf returns when payment p is expected to be final: the
// deadline after it was written (Payment.Written).
func (s *Service) deadlineOf(p Payment) time.Time { return p.Written().Add(s.deadline) }

// now returns the current time in UTC at millisecond precision, the
// precision timestamps are stored with.
func (s *Service) now() time.Time { return timestamp.Of(s.clock()) }

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
