package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"payments/pkg/events"
	"payments/pkg/metrics"
	"payments/pkg/outbound"
)

// WorkerStore is what the worker reads and writes.
type WorkerStore interface {
	EventReader
	// Endpoints reads the company's endpoints (EndpointStore.Endpoints).
	Endpoints(ctx context.Context, companyID string) ([]Endpoint, error)
	// Endpoint reads one endpoint, or ErrEndpointNotFound.
	Endpoint(ctx context.Context, companyID, id string) (Endpoint, error)
	// CreateDelivery writes a new delivery; ErrDeliveryExists when its id
	// is taken.
	CreateDelivery(ctx context.Context, d Delivery) error
	// Delivery reads one delivery; ErrDeliveryNotFound when absent.
	Delivery(ctx context.Context, companyID, deliveryID string) (Delivery, error)
	// ClaimAttempt takes attempt n of d for the caller until the time
	// given, on the condition that d is PENDING with n-1 attempts and no
	// other claim on attempt n runs past now; otherwise ErrAttemptTaken.
	ClaimAttempt(ctx context.Context, d Delivery, n int, now, until time.Time) error
	// RecordAttempt appends a to d's attempts and sets its status, on the
	// condition that d is PENDING with a.Number-1 attempts; otherwise
	// ErrAttemptTaken. A delivery left PENDING is due for its next attempt
	// from now (Resumer).
	RecordAttempt(ctx context.Context, d Delivery, a Attempt, status Status, now time.Time) error
	// MarkQueued records that the message of attempt n of the delivery is
	// queued (it never lowers the mark).
	MarkQueued(ctx context.Context, companyID, deliveryID string, n int) error
	// MarkDispatched records that the worker handled the event.
	MarkDispatched(ctx context.Context, companyID, eventID string, now time.Time) error
	// CancelDelivery sets d CANCELED on the condition that it is PENDING
	// with the attempts d has; otherwise ErrAttemptTaken.
	CancelDelivery(ctx context.Context, d Delivery, now time.Time) error
}

// Message kinds the worker receives besides outbox.Message (which has no
// kind).
const (
	// KindAttempt is the message of one attempt of one delivery.
	KindAttempt = "attempt"
	// KindResend asks for a fresh delivery round of an event.
	KindResend = "resend"
)

// Message is a message of the webhooks queue. An outbox.Message (company_id
// and event_id, no kind) starts the first delivery of a new event.
type Message struct {
	Kind       string `json:"kind,omitempty"`
	CompanyID  string `json:"company_id"`
	EventID    string `json:"event_id,omitempty"`
	DeliveryID string `json:"delivery_id,omitempty"`
	// Attempt is the attempt number of a KindAttempt message.
	Attempt int `json:"attempt,omitempty"`
	// Round is the resend round of a KindResend message.
	Round int `json:"round,omitempty"`
	// EndpointID limits a KindResend round to one endpoint.
	EndpointID string `json:"endpoint_id,omitempty"`
}

// Worker makes delivery attempts, one per message.
type Worker struct {
	store  WorkerStore
	sender Sender
	queue  Queue
	sealer Sealer
	clock  func() time.Time
}

// NewWorker returns a Worker that reads and records in store, posts
// through sender and queues retries on q, on the clock now (nil:
// time.Now); sealer opens the endpoints' secrets that sign a new delivery.
func NewWorker(store WorkerStore, sender Sender, q Queue, sealer Sealer, now func() time.Time) *Worker {
	if now == nil {
		now = time.Now
	}
	return &Worker{store: store, sender: sender, queue: q, sealer: sealer, clock: now}
}

// Handle processes one message of the webhooks queue. It returns an error
// only when the message should come back (a DynamoDB or SQS failure): a
// receiver's failure is recorded and retried through a new delayed message,
// and a message naming nothing that exists is dropped with a warning.
func (w *Worker) Handle(ctx context.Context, body []byte) error {
	var m Message
	if err := json.Unmarshal(body, &m); err != nil || m.CompanyID == "" {
		slog.WarnContext(ctx, "webhook message dropped: malformed")
		return nil
	}
	switch {
	case m.Kind == KindAttempt && m.DeliveryID != "" && m.Attempt >= 1 && m.Attempt <= MaxAttempts:
		return w.attemptMessage(ctx, m)
	case m.Kind == KindResend && m.EventID != "" && m.Round >= 1:
		return w.dispatch(ctx, m.CompanyID, m.EventID, m.Round, m.EndpointID)
	case m.Kind == "" && m.EventID != "":
		return w.dispatch(ctx, m.CompanyID, m.EventID, 0, "")
	}
	slog.WarnContext(ctx, "webhook message dropped: unknown kind", "kind", m.Kind, "company_id", m.CompanyID)
	return nil
}

// dispatch creates the deliveries of round for the event (or finds them,
// for a duplicate message) and makes their first attempt: one per enabled
// endpoint that takes the event's kind (only endpointID's when set), and
// one to the event's notify_url (not when endpointID is set), signed with
// the console endpoint's secret, the company's signing secret.
func (w *Worker) dispatch(ctx context.Context, companyID, eventID string, round int, endpointID string) error {
	ev, err := w.store.Event(ctx, companyID, eventID)
	if errors.Is(err, events.ErrNotFound) {
		slog.WarnContext(ctx, "webhook message dropped: no such event", "company_id", companyID, "event_id", eventID)
		return nil
	}
	if err != nil {
		return err
	}
	eps, err := w.store.Endpoints(ctx, companyID)
	if err != nil {
		return err
	}
	now := w.clock().UTC()
	var fresh []Delivery
	for _, e := range eps {
		if !e.Receives(ev.Kind) || endpointID != "" && e.ID != endpointID {
			continue
		}
		if e, err = OpenSecrets(ctx, w.sealer, e, now); err != nil {
			return err
		}
		fresh = append(fresh, newDelivery(ev, DestinationWebhook, e, e.URL, round, now))
	}
	if ev.NotifyURL != "" && endpointID == "" {
		var console Endpoint
		if len(eps) > 0 && eps[0].Console {
			if console, err = OpenSecrets(ctx, w.sealer, eps[0], now); err != nil {
				return err
			}
		}
		fresh = append(fresh, newDelivery(ev, DestinationNotifyURL, console, ev.NotifyURL, round, now))
	}
	var ds []Delivery
	for _, d := range fresh {
		err := w.store.CreateDelivery(ctx, d)
		if errors.Is(err, ErrDeliveryExists) {
			d, err = w.store.Delivery(ctx, companyID, d.ID)
		}
		if err != nil {
			return err
		}
		ds = append(ds, d)
	}
	switch err := w.store.MarkDispatched(ctx, companyID, eventID, now); {
	case errors.Is(err, events.ErrNotFound):
		// Taken back before it was sent (a late approval the network
		// declined): nothing to send; the sweeper cancels its deliveries.
		slog.InfoContext(ctx, "webhook event taken back before it was sent", "company_id", companyID, "event_id", eventID)
		return nil
	case err != nil:
		return err
	}
	if len(ds) == 0 {
		slog.InfoContext(ctx, "webhook event has no destination", "company_id", companyID, "event_id", eventID, "event", ev.Kind)
		return nil
	}
	// Every destination is tried at once: each attempt may take the whole
	// time-out, and a failing endpoint must not hold up the others.
	errs := make([]error, len(ds))
	var wg sync.WaitGroup
	for i, d := range ds {
		wg.Go(func() { errs[i] = w.attempt(ctx, ev, d, 1) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// newDelivery returns the pending delivery of ev to url, its signature
// fixed now with the secrets of e (none when e has none); e is the
// endpoint of a webhook delivery.
func newDelivery(ev events.Event, dest Destination, e Endpoint, url string, round int, now time.Time) Delivery {
	d := Delivery{
		ID:          DeliveryID(ev.ID, dest, e.ID, round),
		CompanyID:   ev.CompanyID,
		EventID:     ev.ID,
		Destination: dest,
		Round:       round,
		URL:         url,
		Signature:   e.Sign(now, ev.Body),
		Status:      StatusPending,
		CreatedAt:   now,
		UpdatedAt:   now,
		ExpiresAt:   ev.CreatedAt.Add(events.Retention),
	}
	if dest == DestinationWebhook {
		d.EndpointID = e.ID
	}
	return d
}

func (w *Worker) attemptMessage(ctx context.Context, m Message) error {
	d, err := w.store.Delivery(ctx, m.CompanyID, m.DeliveryID)
	if errors.Is(err, ErrDeliveryNotFound) {
		slog.WarnContext(ctx, "webhook message dropped: no such delivery", "company_id", m.CompanyID, "delivery_id", m.DeliveryID)
		return nil
	}
	if err != nil {
		return err
	}
	ev, err := w.store.Event(ctx, m.CompanyID, d.EventID)
	if errors.Is(err, events.ErrNotFound) {
		slog.WarnContext(ctx, "webhook message dropped: no such event", "company_id", m.CompanyID, "delivery_id", m.DeliveryID)
		// Nothing can be sent without the event: the delivery stops
		// there, rather than wait for the sweeper every minute.
		if d.Status == StatusPending {
			if err := w.store.CancelDelivery(ctx, d, w.clock().UTC()); err != nil && !errors.Is(err, ErrAttemptTaken) {
				return err
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	if stop, err := w.endpointGone(ctx, d); stop || err != nil {
		return err
	}
	return w.attempt(ctx, ev, d, m.Attempt)
}

// endpointGone cancels a pending delivery whose endpoint was deleted or
// disabled since it was created, and reports whether it did (or found it no
// longer pending).
func (w *Worker) endpointGone(ctx context.Context, d Delivery) (bool, error) {
	if d.EndpointID == "" || d.Status != StatusPending {
		return false, nil
	}
	e, err := w.store.Endpoint(ctx, d.CompanyID, d.EndpointID)
	switch {
	case errors.Is(err, ErrEndpointNotFound):
	case err != nil:
		return false, err
	case e.Status == EndpointEnabled:
		return false, nil
	}
	err = w.store.CancelDelivery(ctx, d, w.clock().UTC())
	if err != nil && !errors.Is(err, ErrAttemptTaken) {
		return false, err
	}
	slog.InfoContext(ctx, "webhook delivery canceled: its endpoint is disabled or deleted",
		"company_id", d.CompanyID, "delivery_id", d.ID, "endpoint_id", d.EndpointID)
	return true, nil
}

// AttemptLease is how long a claim on an attempt keeps other copies of its
// message from making it: longer than an attempt (AttemptTimeout) and
// than the webhook worker's own time-out (20 s), so that a claim outlives
// no worker that holds it, and shorter than the queue's visibility
// time-out (90 s), so that the message of a worker that died holding it
// makes the attempt when it comes back.
const AttemptLease = 30 * time.Second

// attempt makes attempt n of d, records it and queues the next one after a
// failure. A copy of a message whose attempt is already recorded only makes
// sure the next attempt is queued (the first copy may have died before);
// one whose attempt another copy is making (it holds the claim) does
// nothing.
func (w *Worker) attempt(ctx context.Context, ev events.Event, d Delivery, n int) error {
	if d.Status != StatusPending {
		return nil
	}
	switch done := len(d.Attempts); {
	case done >= n:
		if done == n && n < MaxAttempts && d.Queued < n+1 {
			return w.schedule(ctx, d, n+1)
		}
		return nil
	case done < n-1:
		slog.WarnContext(ctx, "webhook attempt dropped: an earlier attempt is missing",
			"company_id", d.CompanyID, "delivery_id", d.ID, "attempt", n, "recorded", done)
		return nil
	}
	now := w.clock().UTC()
	err := w.store.ClaimAttempt(ctx, d, n, now, now.Add(AttemptLease))
	if errors.Is(err, ErrAttemptTaken) {
		slog.InfoContext(ctx, "webhook attempt made by another copy of the message",
			"company_id", d.CompanyID, "delivery_id", d.ID, "attempt", n)
		return nil
	}
	if err != nil {
		return err
	}
	a := w.send(ctx, ev, d, n)
	status := StatusPending
	switch {
	case a.Succeeded():
		status = StatusDelivered
	case n >= MaxAttempts:
		status = StatusFailed
	}
	err = w.store.RecordAttempt(ctx, d, a, status, w.clock().UTC())
	if errors.Is(err, ErrAttemptTaken) {
		slog.InfoContext(ctx, "webhook attempt recorded by another copy of the message",
			"company_id", d.CompanyID, "delivery_id", d.ID, "attempt", n)
		return nil
	}
	if err != nil {
		return err
	}
	slog.InfoContext(ctx, "webhook attempt",
		"company_id", d.CompanyID, "event_id", d.EventID, "event", ev.Kind, "delivery_id", d.ID,
		"destination", d.Destination, "endpoint_id", d.EndpointID, "attempt", n, "status_code", a.StatusCode, "error", a.Error,
		"duration_ms", a.Duration.Milliseconds(), "delivery_status", status)
	switch status {
	case StatusDelivered:
		metrics.Record(ctx, nil, metrics.One(metrics.WebhookDeliveriesSucceeded),
			metrics.Elapsed(metrics.WebhookDeliveryDelay, a.At.Add(a.Duration).Sub(ev.CreatedAt)))
	case StatusFailed:
		metrics.Count(ctx, metrics.WebhookDeliveriesFailed)
	default:
		metrics.Count(ctx, metrics.WebhookDeliveriesRetried)
	}
	if status != StatusPending {
		return nil
	}
	d.Attempts = append(d.Attempts, a)
	return w.schedule(ctx, d, n+1)
}

// schedule queues attempt n of d after RetryDelay and marks it queued.
func (w *Worker) schedule(ctx context.Context, d Delivery, n int) error {
	body, err := json.Marshal(Message{Kind: KindAttempt, CompanyID: d.CompanyID, DeliveryID: d.ID, Attempt: n})
	if err != nil {
		return fmt.Errorf("webhooks: encode message: %w", err)
	}
	if err := w.queue.Send(ctx, body, RetryDelay); err != nil {
		return err
	}
	return w.store.MarkQueued(ctx, d.CompanyID, d.ID, n)
}

// send posts the event body to the delivery's URL once.
func (w *Worker) send(ctx context.Context, ev events.Event, d Delivery, n int) Attempt {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set(EventIDHeader, ev.ID)
	h.Set(EventTypeHeader, string(ev.Kind))
	if d.Signature != "" {
		h.Set(SignatureHeader, d.Signature)
	}
	start := w.clock().UTC()
	actx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	began := time.Now()
	res, err := w.sender.Post(actx, d.URL, h, ev.Body)
	a := Attempt{Number: n, At: start, Duration: time.Since(began)}
	if err != nil {
		a.Error = describe(err)
	} else {
		a.StatusCode = res.StatusCode
	}
	return a
}

// maxErrorLength caps the error text recorded for an attempt.
const maxErrorLength = 300

// describe turns a failed request into the text the delivery log shows:
// what went wrong, without the URL (which the log shows next to it).
func describe(err error) string {
	var ne net.Error
	var text string
	switch {
	case errors.Is(err, outbound.ErrNotHTTPS):
		text = "refused: not an https URL"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		text = fmt.Sprintf("timeout: no answer within %s", AttemptTimeout)
	default:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		text = err.Error()
	}
	if len(text) > maxErrorLength {
		text = text[:maxErrorLength]
	}
	return text
}
