package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"payments/pkg/events"
	"payments/pkg/field"
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
	// Endpoints reads the company's endpoints (EndpointStore.Endpoints).
	Endpoints(ctx context.Context, companyID string) ([]Endpoint, error)
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
	store LogStore
	queue Queue
}

// NewLog returns the delivery log over store; a resend queues its round on
// q.
func NewLog(store LogStore, q Queue) *Log {
	return &Log{store: store, queue: q}
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
// they are now (the enabled endpoints that take its kind, the event's
// notify_url), or to endpointID's alone when it is set: new delivery ids
// ("…#r<n>"), a new signature timestamp, the same body bytes. The worker
// creates the round's deliveries when it takes the message, so the record
// returned may not show them yet. Two resends at the same moment may become
// one round.
func (l *Log) Resend(ctx context.Context, companyID, eventID, endpointID string) (Record, error) {
	r, err := l.Get(ctx, companyID, eventID)
	if err != nil {
		return Record{}, err
	}
	eps, err := l.store.Endpoints(ctx, companyID)
	if err != nil {
		return Record{}, err
	}
	if err := checkResend(r.Event, eps, endpointID); err != nil {
		return Record{}, err
	}
	round := 1
	for _, d := range r.Deliveries {
		round = max(round, d.Round+1)
	}
	body, err := json.Marshal(Message{Kind: KindResend, CompanyID: companyID, EventID: eventID, Round: round, EndpointID: endpointID})
	if err != nil {
		return Record{}, fmt.Errorf("webhooks: encode message: %w", err)
	}
	if err := l.queue.Send(ctx, body, 0); err != nil {
		return Record{}, err
	}
	return r, nil
}

// checkResend refuses a resend that has nowhere to go: endpointID (when
// set) must name an enabled endpoint that takes the event's kind; otherwise
// one endpoint must take it, or the event have a notify_url.
func checkResend(ev events.Event, eps []Endpoint, endpointID string) error {
	if endpointID != "" {
		i := slices.IndexFunc(eps, func(e Endpoint) bool { return e.ID == endpointID && e.URL != "" })
		switch {
		case i < 0:
			return field.Invalid("endpoint_id", "is not an endpoint of the company")
		case eps[i].Status != EndpointEnabled:
			return field.Invalid("endpoint_id", "names a disabled endpoint: enable it first")
		case !eps[i].Receives(ev.Kind):
			return field.Invalid("endpoint_id", "names an endpoint that does not take "+string(ev.Kind)+" events")
		}
		return nil
	}
	if ev.NotifyURL == "" && !slices.ContainsFunc(eps, func(e Endpoint) bool { return e.Receives(ev.Kind) }) {
		return ErrNoDestination
	}
	return nil
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
