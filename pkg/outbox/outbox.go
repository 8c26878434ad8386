// Package outbox publishes events that were committed with the change they
// report.
//
// A service writes an events.Event in the same DynamoDB transaction as its
// change (see store.Outbox), then calls Publish right after the commit:
// Publish queues a message naming the event on the webhooks queue and marks
// the event published. A process that dies between commit and publish leaves
// the event unpublished; a message lost after the publish (a queue that
// lost its messages, a message dead-lettered after repeated failures)
// leaves it published but never taken by the webhook worker, which marks
// each event it takes (webhooks.Worker). Sweep, run every minute by the sweeper,
// publishes every event left unpublished for longer than Grace, and again
// every event published more than Grace ago that the worker has not taken.
// Publishing twice is harmless: the webhook worker delivers an event once
// per destination.
//
// The payments function does not publish itself: its events travel in its
// messages on the payouts queue and the payout worker publishes them
// (payments.Job, docs/publication.md).
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"payments/pkg/events"
)

// Grace is how long an event may stay unpublished, or published and not
// taken by the webhook worker, before the sweeper publishes it (again).
const Grace = 60 * time.Second

// Store reads and marks outbox events.
type Store interface {
	// MarkPublished records that the event was queued at the time given:
	// until the webhook worker takes it, it waits among the undispatched
	// events from that time on (an event the worker took already stays
	// out of them).
	MarkPublished(ctx context.Context, companyID, eventID string, at time.Time) error
	// Unpublished returns up to limit events committed before cutoff and not
	// yet marked published, oldest first.
	Unpublished(ctx context.Context, cutoff time.Time, limit int) ([]events.Event, error)
	// Undispatched returns up to limit events last marked published before
	// cutoff that the webhook worker has not taken, oldest first: their
	// message was lost.
	Undispatched(ctx context.Context, cutoff time.Time, limit int) ([]events.Event, error)
}

// Queue sends a message to the webhooks queue.
type Queue interface {
	Send(ctx context.Context, body []byte, delay time.Duration) error
}

// Message is what the webhooks queue carries for a newly published event.
type Message struct {
	CompanyID string `json:"company_id"`
	EventID   string `json:"event_id"`
}

// Publisher queues committed events.
type Publisher struct {
	store Store
	queue Queue
	// Now is the time of a publication; tests may replace it.
	Now func() time.Time
}

// NewPublisher returns a Publisher that queues to q and marks in s.
func NewPublisher(s Store, q Queue) *Publisher { return &Publisher{store: s, queue: q, Now: time.Now} }

// Publish queues each event and marks it published; of an event it reads
// only the key, CompanyID and ID. It tries every event
// and returns the errors joined; an event it could not queue stays
// unpublished for the sweeper, so the caller may log the error and go on:
// the change itself is committed.
func (p *Publisher) Publish(ctx context.Context, evs ...events.Event) error {
	var errs []error
	for _, e := range evs {
		if err := p.publish(ctx, e.CompanyID, e.ID, p.Now()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// publish queues the event's message and marks it published at.
func (p *Publisher) publish(ctx context.Context, companyID, eventID string, at time.Time) error {
	body, err := json.Marshal(Message{CompanyID: companyID, EventID: eventID})
	if err != nil {
		return fmt.Errorf("outbox: encode message: %w", err)
	}
	if err := p.queue.Send(ctx, body, 0); err != nil {
		return fmt.Errorf("outbox: queue event %s: %w", eventID, err)
	}
	if err := p.store.MarkPublished(ctx, companyID, eventID, at); err != nil {
		return fmt.Errorf("outbox: mark event %s published: %w", eventID, err)
	}
	return nil
}

// Deferred is the Publisher of a function that publishes nothing itself:
// the events it commits wait in the outbox for another to publish them
// (the card-worker, applying the network's advice of a decision; the
// sweeper, past Grace).
type Deferred struct{}

// Publish leaves evs in the outbox.
func (Deferred) Publish(context.Context, ...events.Event) error { return nil }

// SweepLimit bounds the events one Sweep publishes; the next sweep, a
// minute later, goes on with the rest.
const SweepLimit = 1000

// Sweep publishes the events left unpublished for longer than Grace before
// now, then publishes again the events published more than Grace before
// now that the webhook worker has not taken, at most SweepLimit in all,
// marking each published at now (so that the next sweeps leave it to the
// worker for Grace), and returns how many it published. It stops at the
// first event it cannot queue: the queue is likely down for the others
// too.
func (p *Publisher) Sweep(ctx context.Context, now time.Time) (int, error) {
	cutoff := now.Add(-Grace)
	unpublished, err := p.store.Unpublished(ctx, cutoff, SweepLimit)
	if err != nil {
		return 0, fmt.Errorf("outbox: list unpublished: %w", err)
	}
	var lost []events.Event
	if left := SweepLimit - len(unpublished); left > 0 {
		if lost, err = p.store.Undispatched(ctx, cutoff, left); err != nil {
			return 0, fmt.Errorf("outbox: list undispatched: %w", err)
		}
	}
	published := 0
	for _, e := range slices.Concat(unpublished, lost) {
		if err := p.publish(ctx, e.CompanyID, e.ID, now); err != nil {
			return published, err
		}
		published++
	}
	if published > 0 {
		slog.InfoContext(ctx, "outbox swept", "published", published,
			"unpublished", len(unpublished), "undispatched", len(lost))
	}
	return published, nil
}
