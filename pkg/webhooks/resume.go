package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// StallAfter is how long a PENDING delivery may go without moving (created,
// an attempt recorded, queued again) before the sweeper queues its next
// attempt again: far longer than the retry delay and an attempt's
// time-out, so the message of a delivery that stopped moving was lost (a
// queue that lost its messages, a worker that died before queueing).
const StallAfter = time.Minute

// ResumeLimit bounds the deliveries one sweep queues again; the next
// sweep, a minute later, goes on with the rest.
const ResumeLimit = 1000

// ResumeStore is what the Resumer reads and writes.
type ResumeStore interface {
	// StalledDeliveries returns up to limit PENDING deliveries, of every
	// company, that have not moved since before cutoff, oldest first;
	// eventually consistent: the caller reads each again.
	StalledDeliveries(ctx context.Context, cutoff time.Time, limit int) ([]Delivery, error)
	// Delivery reads one delivery, strongly consistent;
	// ErrDeliveryNotFound when absent.
	Delivery(ctx context.Context, companyID, deliveryID string) (Delivery, error)
	// Requeue records that d moved at now (its next attempt queued again),
	// on the condition that it is still PENDING with the attempts d has
	// and has not moved since d was read; otherwise ErrAttemptTaken.
	Requeue(ctx context.Context, d Delivery, now time.Time) error
}

// Resumer finds the deliveries whose message was lost and queues their
// next attempt again: the sweeper's webhook_deliveries step.
type Resumer struct {
	store ResumeStore
	queue Queue
}

// NewResumer returns a Resumer that reads and marks in store and queues on
// q, the webhooks queue.
func NewResumer(store ResumeStore, q Queue) *Resumer { return &Resumer{store: store, queue: q} }

// Sweep queues again the next attempt of each PENDING delivery that has
// not moved for StallAfter before now, at most ResumeLimit, and returns
// how many it queued. Each is read again and marked as moved at now before
// its message is sent, so that a delivery that moved meanwhile is left
// alone and two sweeps never both queue one; the worker makes each attempt
// number once whatever copies of its message come (Worker). It goes on
// after an error reading or marking a delivery, stops at the first message
// it cannot send (the delivery it marked waits for a later sweep), and
// returns the errors joined.
func (r *Resumer) Sweep(ctx context.Context, now time.Time) (int, error) {
	cutoff := now.Add(-StallAfter)
	stalled, err := r.store.StalledDeliveries(ctx, cutoff, ResumeLimit)
	if err != nil {
		return 0, fmt.Errorf("webhooks: list stalled deliveries: %w", err)
	}
	resumed := 0
	var errs []error
	for _, s := range stalled {
		d, err := r.store.Delivery(ctx, s.CompanyID, s.ID)
		switch {
		case errors.Is(err, ErrDeliveryNotFound):
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		case d.Status != StatusPending || !d.UpdatedAt.Before(cutoff):
			continue
		}
		switch err := r.store.Requeue(ctx, d, now); {
		case errors.Is(err, ErrAttemptTaken):
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		}
		n := len(d.Attempts) + 1
		body, err := json.Marshal(Message{Kind: KindAttempt, CompanyID: d.CompanyID, DeliveryID: d.ID, Attempt: n})
		if err != nil {
			return resumed, fmt.Errorf("webhooks: encode message: %w", err)
		}
		if err := r.queue.Send(ctx, body, 0); err != nil {
			// The queue is likely down for the others too.
			errs = append(errs, fmt.Errorf("webhooks: queue attempt %d of %s: %w", n, d.ID, err))
			break
		}
		slog.InfoContext(ctx, "webhook delivery resumed", "company_id", d.CompanyID, "event_id", d.EventID,
			"delivery_id", d.ID, "attempt", n, "stalled_since", d.UpdatedAt)
		resumed++
	}
	if resumed > 0 {
		slog.InfoContext(ctx, "webhook deliveries swept", "resumed", resumed)
	}
	return resumed, errors.Join(errs...)
}
