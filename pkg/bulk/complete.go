package bulk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"payments/pkg/events"
	"payments/pkg/wallets"
)

// SweepAge is how long after its acceptance a batch not complete is looked
// at by the sweeper: the job of its first chunk not done is sent again, and
// it is completed if every item is final.
const SweepAge = time.Minute

// sweepLimit bounds the batches one sweep looks at: every open batch is
// read (one GetItem), but only those with chunks not done, or whose items
// are all final, cost more.
const sweepLimit = 1000

// Completer completes bulk batches: it is told of each item that became
// final (payments.BatchWatcher) and completes the batch when that item was
// its last. It works on the batches' store alone, so it is built before
// the payments service, which tells it of its items' final transitions,
// and the bulk service over that one, which completes through it too: no
// service needs the other after it is built. It is stateless: two over the
// same store and publisher are one.
type Completer struct {
	store  Store
	events Publisher
	clock  func() time.Time
}

// NewCompleter returns the completer of the batches of store, publishing
// payment.bulk.completed with events, on the clock now (nil: time.Now), or
// an error naming what it lacks.
func NewCompleter(store Store, events Publisher, now func() time.Time) (*Completer, error) {
	switch {
	case store == nil:
		return nil, errors.New("bulk: no Store to build the completer")
	case events == nil:
		return nil, errors.New("bulk: no Events to build the completer")
	}
	if now == nil {
		now = time.Now
	}
	return &Completer{store: store, events: events, clock: now}, nil
}

// ItemFinished completes the batch if the item that just became final was
// its last (payments.BatchWatcher). A failure is logged: the sweeper
// completes the batch.
func (c *Completer) ItemFinished(ctx context.Context, companyID, batchID string) {
	c.complete(ctx, companyID, batchID)
}

// complete completes batch id when every chunk is written and every
// accepted item final: in one transaction it is marked COMPLETED, its
// reservation entries, which hold nothing any more, become SUCCESS, and
// payment.bulk.completed is written, then published. It runs once
// whoever calls it: the write is conditioned on the batch as read.
func (c *Completer) complete(ctx context.Context, companyID, id string) {
	if err := c.tryComplete(ctx, companyID, id); err != nil {
		slog.WarnContext(ctx, "complete bulk batch; the sweeper will", "company_id", companyID, "batch_id", id, "error", err)
	}
}

// tryComplete is complete, its error returned.
func (c *Completer) tryComplete(ctx context.Context, companyID, id string) error {
	b, err := c.store.GetBatch(ctx, companyID, id)
	if err != nil {
		return err
	}
	return c.completeAsRead(ctx, b)
}

// completeAsRead completes b, as just read, if it is done.
func (c *Completer) completeAsRead(ctx context.Context, b Batch) error {
	if b.CompletedAt != nil || !b.Done() {
		return nil
	}
	companyID, id := b.CompanyID, b.ID
	now := c.clock().UTC()
	var legs []wallets.Leg
	for _, r := range b.Reservations {
		legs = append(legs, wallets.Leg{WalletID: r.WalletID, Updates: []wallets.EntryUpdate{{
			ID: r.EntryID, Balance: wallets.Payout, From: wallets.StatusPending, To: wallets.StatusSuccess, CompletedAt: &now,
		}}})
	}
	closing, err := wallets.NewPosting(companyID, now, legs...)
	if err != nil {
		return fmt.Errorf("bulk: close batch %s: %w", id, err)
	}
	done := b
	done.CompletedAt, done.UpdatedAt = &now, now
	ev, err := events.Build(companyID, events.PaymentBulkCompletedData{BulkBatch: done.View()}, now)
	if err != nil {
		return err
	}
	switch err := c.store.CompleteBatch(ctx, b, closing, ev); {
	case errors.Is(err, ErrChanged):
		return nil // completed by another, or moved on: its last change completes it
	case err != nil:
		return fmt.Errorf("bulk: complete batch %s: %w", id, err)
	}
	slog.InfoContext(ctx, "bulk batch completed", "company_id", companyID, "batch_id", id,
		"success", b.Succeeded, "failed", b.Failed, "rejected", b.RejectedCount)
	if err := c.events.Publish(ctx, ev); err != nil {
		slog.WarnContext(ctx, "publish bulk completion; the sweeper will", "company_id", companyID, "event_id", ev.ID, "error", err)
	}
	return nil
}

// Sweep looks at the batches accepted more than SweepAge ago and not
// complete: it sends again the job of the first chunk of each that is not
// written, the head of its chain of chunk jobs (a job lost or
// dead-lettered, a run that died before it queued the next), and completes
// those whose items are all final (a completion missed). A job sent again
// while the chain is alive finds its chunk written or held and does
// nothing (queueNext). It returns how many chunk jobs it sent.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	refs, err := s.store.OpenBatches(ctx, s.now().Add(-SweepAge), sweepLimit)
	if err != nil {
		return 0, fmt.Errorf("bulk: sweep: %w", err)
	}
	sent := 0
	var errs []error
	for _, ref := range refs {
		if ctx.Err() != nil {
			break // the step's time is up: the next sweep goes on
		}
		b, err := s.store.GetBatch(ctx, ref.CompanyID, ref.ID)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if b.Done() {
			errs = append(errs, s.completer.completeAsRead(ctx, b))
			continue
		}
		if b.ChunksDone == b.Chunks {
			continue // every item written: its last transition completes it
		}
		left, err := s.store.ChunksLeft(ctx, b.CompanyID, b.ID)
		errs = append(errs, err)
		if len(left) > 0 {
			errs = append(errs, s.sendChunk(ctx, b, slices.Min(left)))
			sent++
		}
	}
	return sent, errors.Join(errs...)
}
