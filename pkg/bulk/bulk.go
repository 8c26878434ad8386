// Package bulk holds bulk payout batches: up to MaxItems payouts in one
// request (POST /payment/payouts/bulk), each validated by the single
// payout's rules, reserved together, then written as ordinary payouts in
// the background and followed to completion (docs/bulk.md).
//
// The acceptance reserves the batch at once: one transaction moves each
// wallet's payout_reserved by the total of its accepted items and writes a
// reservation entry (wallets.TypeBulkPayout) holding it, with the batch
// itself; the items, kept in chunks of ChunkSize rows, were written just
// before it. A chunk job on the bulk payouts queue then writes each chunk's
// payouts (claiming their external_ids) and queues their submission, then
// the next chunk's job, one chunk of a batch at a time: from
// there each item is an ordinary payout whose settlement draws its total
// out of the batch's reservation entry (wallets.EntryDraw). The batch is
// COMPLETED, and payment.bulk.completed emitted, once every accepted item is
// final.
package bulk

import (
	"context"
	"errors"
	"time"

	"payments/pkg/events"
	"payments/pkg/money"
	"payments/pkg/page"
	"payments/pkg/payments"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// Limits of a batch.
const (
	// MaxItems is the most items one batch holds.
	MaxItems = 10000
	// MaxWallets is the most wallets ((currency, country) pairs) one batch
	// pays from: its reservation is one transaction of two items per
	// wallet besides the batch and the Idempotency-Key's effect, within
	// DynamoDB Local's budget of ten.
	MaxWallets = 4
	// ChunkSize is the number of rows kept in one chunk item and written
	// as payouts by one chunk job.
	ChunkSize = 100
	// MaxRejectedShown bounds the rejected rows the acceptance answers
	// with, so that its answer fits the Idempotency-Key's record; the
	// items route lists them all.
	MaxRejectedShown = 1000
)

// Errors of this package; the catalogue (pkg/function/errors.go) maps them
// to HTTP.
var (
	// ErrNotFound is a batch that does not exist for the caller's company.
	ErrNotFound = errors.New("bulk: batch not found")
	// ErrChanged is a write whose batch or chunk is no longer as read:
	// another run did the work first.
	ErrChanged = errors.New("bulk: batch changed since it was read")
)

// Mode says what happens to a batch with rejected items.
type Mode string

// Batch modes.
const (
	// ModePartial accepts the valid items that the wallets cover, in row
	// order, and rejects the others.
	ModePartial Mode = "partial"
	// ModeAllOrNothing rejects the whole batch when any item is invalid or
	// the wallets do not cover them all.
	ModeAllOrNothing Mode = "all_or_nothing"
)

// Status is where a batch stands.
type Status string

// Batch statuses.
const (
	// StatusAccepted: the money is reserved; the items are being written
	// as payouts.
	StatusAccepted Status = "ACCEPTED"
	// StatusProcessing: every accepted item is a payout, some not final.
	StatusProcessing Status = "PROCESSING"
	// StatusCompleted: every accepted item is SUCCESS or FAILED.
	StatusCompleted Status = "COMPLETED"
)

// ItemStatus is where an item stands: its payout's status, or REJECTED.
type ItemStatus string

// Item statuses.
const (
	ItemPending    ItemStatus = "PENDING"
	ItemProcessing ItemStatus = "PROCESSING"
	ItemSuccess    ItemStatus = "SUCCESS"
	ItemFailed     ItemStatus = "FAILED"
	ItemRejected   ItemStatus = "REJECTED"
)

// ItemStatuses lists the item statuses.
var ItemStatuses = []ItemStatus{ItemPending, ItemProcessing, ItemSuccess, ItemFailed, ItemRejected}

// Batch is a bulk payout batch. Amounts are minor units of Currency.
type Batch struct {
	ID          string
	CompanyID   string
	Mode        Mode
	Description string
	// Currency is the currency of every accepted item; "" when none was.
	Currency string
	// ItemCount counts the rows received; AcceptedCount and RejectedCount
	// split them (a row found a duplicate when its payout is written moves
	// from accepted to rejected).
	ItemCount, AcceptedCount, RejectedCount int
	// Processing, Succeeded and Failed count the accepted items by their
	// payout's status; the others are pending.
	Processing, Succeeded, Failed int
	// TotalAmount and TotalFees add up the accepted items.
	TotalAmount, TotalFees int64
	// Paid and FeesPaid add up the SUCCESS items' amounts and fees,
	// Refunded the FAILED items' amounts and fees.
	Paid, FeesPaid, Refunded int64
	// Chunks is the number of chunks of rows, ChunksDone those whose
	// payouts are written.
	Chunks, ChunksDone int
	// Reservations are the batch's reservation entries, one per wallet.
	Reservations []Reservation
	// CorrelationID is the accepting request's (pkg/correlation).
	CorrelationID string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	CompletedAt   *time.Time
}

// Reservation is a batch's reservation entry on one wallet.
type Reservation struct {
	WalletID string
	EntryID  string
	// Total is what the entry held at acceptance: the amounts and fees of
	// the batch's accepted items on the wallet.
	Total int64
}

// Status returns where b stands.
func (b Batch) Status() Status {
	switch {
	case b.CompletedAt != nil:
		return StatusCompleted
	case b.ChunksDone < b.Chunks:
		return StatusAccepted
	}
	return StatusProcessing
}

// Pending counts the accepted items whose payout is PENDING or not written
// yet.
func (b Batch) Pending() int { return b.AcceptedCount - b.Processing - b.Succeeded - b.Failed }

// Reserved is what the batch still holds on its wallets.
func (b Batch) Reserved() int64 {
	return b.TotalAmount + b.TotalFees - b.Paid - b.FeesPaid - b.Refunded
}

// Done reports whether every chunk is written and every accepted item
// final: the batch can complete.
func (b Batch) Done() bool {
	return b.ChunksDone == b.Chunks && b.Succeeded+b.Failed == b.AcceptedCount
}

// View returns b as clients see it.
func (b Batch) View() events.BulkBatch {
	v := events.BulkBatch{
		BatchID:       b.ID,
		Status:        string(b.Status()),
		Mode:          string(b.Mode),
		ItemCount:     b.ItemCount,
		AcceptedCount: b.AcceptedCount,
		RejectedCount: b.RejectedCount,
		Counts: events.BulkCounts{
			Pending: b.Pending(), Processing: b.Processing, Success: b.Succeeded, Failed: b.Failed, Rejected: b.RejectedCount,
		},
		TotalAmount: money.JSON(b.TotalAmount, b.Currency),
		TotalFees:   money.JSON(b.TotalFees, b.Currency),
		Totals: events.BulkTotals{
			Reserved: money.JSON(b.Reserved(), b.Currency),
			Paid:     money.JSON(b.Paid, b.Currency),
			Fees:     money.JSON(b.FeesPaid, b.Currency),
			Refunded: money.JSON(b.Refunded, b.Currency),
		},
		CreatedAt: timestamp.Format(b.CreatedAt),
		UpdatedAt: timestamp.Format(b.UpdatedAt),
	}
	if b.Description != "" {
		v.Description = &b.Description
	}
	if b.Currency != "" {
		v.Currency = &b.Currency
	}
	if b.CompletedAt != nil {
		s := timestamp.Format(*b.CompletedAt)
		v.CompletedAt = &s
	}
	return v
}

// Input is one item as received, every column as text: a JSON item's
// amount is its JSON text.
type Input struct {
	// Row numbers the items from 1, in the order received.
	Row         int
	ExternalID  string
	Operator    string
	Country     string
	PhoneNumber string
	Amount      string
	Currency    string
	Reason      string
	NotifyURL   string
}

// Row is an item as the batch keeps it: its input and either what its
// acceptance decided (Accepted) or why it was rejected.
type Row struct {
	Input
	Accepted  *Accepted
	Rejection *Rejection
}

// Accepted is what the acceptance of an item decided: its payout's id,
// external_id and reason (defaults applied), wallet, amount and fee.
type Accepted struct {
	TransactionID string
	ExternalID    string
	Reason        string
	WalletID      string
	Amount        int64
	Fee           int64
}

// Rejection is why an item was rejected: the field at fault (if one is),
// the error code and the message, as the single payout's answer would
// give them.
type Rejection struct {
	Field   string
	Code    string
	Message string
}

// Chunk is ChunkSize consecutive rows of a batch (the last one fewer),
// numbered from 0; Done once its payouts are written.
type Chunk struct {
	CompanyID string
	BatchID   string
	N         int
	Rows      []Row
	Done      bool
	// Lease is the id of the chunk job's run that holds the chunk
	// (LeaseChunk), "" for none.
	Lease string
}

// Claim is the claim of an external_id for a payout.
type Claim struct {
	ExternalID    string
	TransactionID string
}

// Ref names a batch found by the sweeper.
type Ref struct {
	CompanyID string
	ID        string
}

// Store is the persistence of batches.
type Store interface {
	// TakenExternalIDs returns which of ids the company has claimed
	// (eventually consistent: the claim itself decides).
	TakenExternalIDs(ctx context.Context, companyID string, ids []string) (map[string]bool, error)
	// CreateBatch writes the chunks, then in one transaction the batch
	// and the reservation posting (each wallet on the condition that its
	// payout_available covers it, wallets.ErrInsufficientBalance naming
	// the wallet with InsufficientWallet otherwise).
	CreateBatch(ctx context.Context, b Batch, chunks []Chunk, reservation wallets.Posting) error
	// GetBatch reads a batch of the company, strongly consistent;
	// ErrNotFound if absent.
	GetBatch(ctx context.Context, companyID, id string) (Batch, error)
	// ListBatches reads page p of the company's batches, newest first.
	ListBatches(ctx context.Context, companyID string, p page.Request) (page.Result[Batch], error)
	// GetChunk reads chunk n of a batch, strongly consistent; ErrNotFound
	// if absent.
	GetChunk(ctx context.Context, companyID, batchID string, n int) (Chunk, error)
	// ClaimExternalIDs claims each external_id for its payout and returns
	// the transaction ids of the claims another payment holds.
	ClaimExternalIDs(ctx context.Context, companyID string, claims []Claim) (map[string]bool, error)
	// GetPayments reads the payments of the company with ids that exist,
	// strongly consistent.
	GetPayments(ctx context.Context, companyID string, ids []string) (map[string]payments.Payment, error)
	// PutPayouts writes new payouts and their acceptance events (each
	// numbered 1 of its payout), each payout last, after its id lookup,
	// event and event counter.
	PutPayouts(ctx context.Context, ps []payments.Payment, evs []events.Event) error
	// LeaseChunk gives chunk n of a batch to the run lease until until, on
	// the condition that it is not done and no other run's lease runs
	// at now; ErrChanged otherwise.
	LeaseChunk(ctx context.Context, companyID, batchID string, n int, lease string, now, until time.Time) error
	// ChunksLeft returns the numbers of a batch's chunks not done, reading
	// no rows.
	ChunksLeft(ctx context.Context, companyID, batchID string) ([]int, error)
	// ReleaseChunk ends the lease of chunk n if lease still holds it.
	ReleaseChunk(ctx context.Context, companyID, batchID string, n int, lease string) error
	// FinishChunk marks c done, on the condition that c.Lease still holds
	// it, rewriting its rows, and adds what it found
	// to the batch: released, the rows rejected as duplicates when their
	// payouts were written, and the posting that releases their
	// reservation (nil for none), at now; ErrChanged when c is already
	// done.
	FinishChunk(ctx context.Context, b Batch, c Chunk, released []Row, release *wallets.Posting, now time.Time) error
	// CompleteBatch marks b completed, closes its reservation entries
	// (posting) and writes ev, on the condition that the batch is still as
	// read; ErrChanged otherwise.
	CompleteBatch(ctx context.Context, b Batch, closing wallets.Posting, ev events.Event) error
	// OpenBatches returns up to limit batches of every company not yet
	// completed, created before cutoff (eventually consistent).
	OpenBatches(ctx context.Context, cutoff time.Time, limit int) ([]Ref, error)
}

// InsufficientWallet is the error CreateBatch returns when the reservation
// on WalletID was refused: it wraps wallets.ErrInsufficientBalance (or
// wallets.ErrInactive).
type InsufficientWallet struct {
	WalletID string
	Err      error
}

func (e *InsufficientWallet) Error() string {
	return "bulk: wallet " + e.WalletID + ": " + e.Err.Error()
}

// Unwrap returns the refusal.
func (e *InsufficientWallet) Unwrap() error { return e.Err }
