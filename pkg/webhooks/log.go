package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/page"
)

// LogStore is what the delivery log reads.
type LogStore interface {
	// Record returns one of the company's events with its deliveries, or
	// events.ErrNotFound.
	Record(ctx context.Context, companyID, eventID string) (Record, error)
	// Records reads page p of the company's events that match q (their
	// status as Record.Status decides it), newest first, each with its
	// deliveries, with the total of those events (counted unless p
	// continues a cursor) and the position of the page's last event when
	// more follow. A cursor position outside the list is
	// page.ErrBadCursor.
	Records(ctx context.Context, companyID string, q Query, p page.Request) (page.Result[Record], error)
	// Event returns one of the company's events, or events.ErrNotFound.
	Event(ctx context.Context, companyID, eventID string) (events.Event, error)
	// Events reads page p of the company's events that match q, newest
	// first, as Records does, without their deliveries.
	Events(ctx context.Context, companyID string, q EventQuery, p page.Request) (page.Result[events.Event], error)
}

// Query filters the delivery log. Zero fields do not filter.
type Query struct {
	Kind   events.Kind
	Status Status
	From   time.Time // inclusive
	To     time.Time // exclusive
}

// Log is the delivery log: a company's events, their deliveries and
// attempts, and resends.
type Log struct {
	store     LogStore
	companies Companies
	queue     Queue
}

// NewLog returns the delivery log over store; a resend reads the webhook
// URL in comps and queues its round on q.
func NewLog(store LogStore, comps Companies, q Queue) *Log {
	return &Log{store: store, companies: comps, queue: q}
}

// List returns page p of the company's events that match q, newest first.
func (l *Log) List(ctx context.Context, companyID string, q Query, p page.Request) (page.Result[Record], error) {
	return l.store.Records(ctx, companyID, q, p)
}

// Get returns one of the company's events with its deliveries; another
// company's event, or an id that is not a UUID, is events.ErrNotFound.
func (l *Log) Get(ctx context.Context, companyID, eventID string) (Record, error) {
	if !ids.IsUUID(eventID) {
		return Record{}, events.ErrNotFound
	}
	return l.store.Record(ctx, companyID, eventID)
}

// Resend queues a fresh delivery round of the event to its destinations as
// they are now (the company's webhook URL, the event's notify_url): new
// delivery ids ("…#r<n>"), a new signature timestamp, the same body bytes.
// The worker creates the round's deliveries when it takes the message, so
// the record returned may not show them yet. Two resends at the same moment
// may become one round.
func (l *Log) Resend(ctx context.Context, companyID, eventID string) (Record, error) {
	r, err := l.Get(ctx, companyID, eventID)
	if err != nil {
		return Record{}, err
	}
	c, err := l.companies.Get(ctx, companyID)
	if err != nil {
		return Record{}, err
	}
	if c.WebhookURL == "" && r.Event.NotifyURL == "" {
		return Record{}, ErrNoDestination
	}
	round := 1
	for _, d := range r.Deliveries {
		round = max(round, d.Round+1)
	}
	body, err := json.Marshal(Message{Kind: KindResend, CompanyID: companyID, EventID: eventID, Round: round})
	if err != nil {
		return Record{}, fmt.Errorf("webhooks: encode message: %w", err)
	}
	if err := l.queue.Send(ctx, body, 0); err != nil {
		return Record{}, err
	}
	return r, nil
}

// Payload returns the data object of an event's body.
func Payload(e events.Event) (json.RawMessage, error) {
	var b struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(e.Body, &b); err != nil {
		return nil, fmt.Errorf("webhooks: event %s body: %w", e.ID, err)
	}
	if b.Data == nil {
		return nil, errors.New("webhooks: event body without data")
	}
	return b.Data, nil
}
