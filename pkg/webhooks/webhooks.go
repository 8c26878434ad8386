// Package webhooks delivers events to the companies that own them (spec §6,
// DESIGN.md §4 and §6): each event goes, as a signed HTTPS POST of its fixed
// body, to each enabled endpoint of the company that subscribed to its kind
// (the console's webhook_url is one of them) and, for payment status
// updates, to the request's notify_url.
//
// One Delivery exists per event and destination (each endpoint is one). The webhook worker makes
// one attempt per SQS message: any 2xx is success; anything else, or a
// network error or time-out, queues the next attempt with a 5 s delay,
// until 4 attempts are spent and the delivery is permanently FAILED. The
// signature header is computed once, when the delivery is created, and sent
// unchanged on every attempt. Every attempt is recorded, and the company
// reads them in the delivery log (GET /webhooks/events), where it can also
// ask for a fresh delivery round (resend).
//
// Delivery is at least once. Attempt N is made by the copy of its message
// that claims it (AttemptLease) and recorded on the condition that the
// delivery is still PENDING with N-1 attempts, so two copies of one message
// neither both send attempt N nor both record it nor both schedule attempt
// N+1. A worker that dies after sending and before recording has its
// attempt sent again once its claim has run out, which at-least-once
// allows: the receiver then gets the same bytes twice, never a different
// body. What a crash or a lost message leaves behind, the sweeper finds
// (Resumer; outbox.Publisher.Sweep for events). See docs/webhooks.md.
package webhooks

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"time"

	"payments/pkg/events"
	"payments/pkg/outbound"
)

// Delivery rules of the spec (§6.1, §8).
const (
	// MaxAttempts is the number of deliveries of one event to one
	// destination: 1 initial attempt and 3 retries.
	MaxAttempts = 4
	// RetryDelay is the SQS delay of the message that carries the next
	// attempt after a failure.
	RetryDelay = 5 * time.Second
	// AttemptTimeout bounds one attempt.
	AttemptTimeout = outbound.DefaultTimeout
)

// Headers of a delivery.
const (
	// SignatureHeader carries "t=<unix seconds>,v1=<hex HMAC-SHA256>" when
	// the company has a signing secret.
	SignatureHeader = "X-Service-Signature"
	// EventIDHeader carries the event id, the same on every attempt and
	// every resend.
	EventIDHeader = "X-Service-Event-Id"
	// EventTypeHeader carries the event name.
	EventTypeHeader = "X-Service-Event-Type"
	// UserAgent identifies the sender.
	UserAgent = "payments-webhooks/1"
)

// Destination is where a delivery goes.
type Destination string

// Destinations of an event.
const (
	// DestinationWebhook is the company's webhook URL.
	DestinationWebhook Destination = "webhook"
	// DestinationNotifyURL is the notify_url of the payment request.
	DestinationNotifyURL Destination = "notify_url"
)

// Status is where a delivery, or an event, stands.
type Status string

// Statuses. A delivery is PENDING, DELIVERED or FAILED; an event is the
// aggregate of its deliveries (Record.Status), or SKIPPED.
const (
	// StatusPending is a delivery with attempts left and no success yet.
	StatusPending Status = "PENDING"
	// StatusDelivered is a delivery that got a 2xx answer.
	StatusDelivered Status = "DELIVERED"
	// StatusFailed is a delivery whose 4 attempts all failed: permanently
	// failed.
	StatusFailed Status = "FAILED"
	// StatusSkipped is an event the worker handled when it had no
	// destination (no endpoint took it and it had no notify_url), or whose
	// deliveries were all canceled.
	StatusSkipped Status = "SKIPPED"
	// StatusCanceled is a delivery whose endpoint was disabled or deleted
	// before it succeeded: its next attempt is not made.
	StatusCanceled Status = "CANCELED"
)

// Statuses lists every status an event may have in the delivery log.
var Statuses = []Status{StatusPending, StatusDelivered, StatusFailed, StatusSkipped}

// Attempt is one POST of a delivery.
type Attempt struct {
	// Number counts from 1.
	Number int
	// At is when the request started.
	At time.Time
	// StatusCode is the HTTP status of the answer, 0 when there was none.
	StatusCode int
	// Error describes a network error, a refused address or a time-out; empty
	// when an answer came.
	Error string
	// Duration is how long the attempt took.
	Duration time.Duration
}

// Succeeded reports whether the attempt got a 2xx answer.
func (a Attempt) Succeeded() bool { return a.Error == "" && a.StatusCode >= 200 && a.StatusCode < 300 }

// Delivery is one event on its way to one destination.
type Delivery struct {
	// ID is "<event id>#webhook#<endpoint id>" or "<event id>#notify",
	// with "#r<n>" added for the n-th resend round: deterministic, so a
	// duplicate message finds the delivery already there. (Deliveries made
	// before endpoints existed are "<event id>#webhook[#r<n>]".)
	ID          string
	CompanyID   string
	EventID     string
	Destination Destination
	// EndpointID is the endpoint of a webhook delivery.
	EndpointID string
	// Round is 0 for the first delivery, n for the n-th resend.
	Round int
	// URL is the destination as it was when the delivery was created.
	URL string
	// Signature is the X-Service-Signature value, fixed at creation; empty
	// when the endpoint had no signing secret.
	Signature string
	Status    Status
	Attempts  []Attempt
	// Queued is the highest attempt number whose message has been queued.
	Queued    int
	CreatedAt time.Time
	UpdatedAt time.Time
	// ExpiresAt is when the store may delete the delivery: its event's end
	// (its creation + events.Retention), so that no delivery outlives it.
	ExpiresAt time.Time
}

// DeliveryID returns the id of the delivery of event eventID to dest (the
// endpoint endpointID of a webhook) in round (0 for the first delivery).
func DeliveryID(eventID string, dest Destination, endpointID string, round int) string {
	id := eventID + "#webhook#" + endpointID
	if dest == DestinationNotifyURL {
		id = eventID + "#notify"
	}
	if round > 0 {
		id += "#r" + strconv.Itoa(round)
	}
	return id
}

// EventIDOf returns the event id a delivery id starts with.
func EventIDOf(deliveryID string) string {
	id, _, _ := strings.Cut(deliveryID, "#")
	return id
}

// Record is an event with its deliveries, as the delivery log shows it.
type Record struct {
	Event events.Event
	// Dispatched reports whether the worker has handled the event.
	Dispatched bool
	// Deliveries are ordered by round, then destination.
	Deliveries []Delivery
}

// Status aggregates the event's deliveries. For each destination (each
// endpoint) the latest round counts, unless it was canceled: PENDING if one
// of them is pending, else FAILED if one failed, else DELIVERED. An event
// without such deliveries is SKIPPED once the worker handled it (it had no
// destination), PENDING before.
func (r Record) Status() Status {
	type dest struct {
		kind     Destination
		endpoint string
	}
	latest := map[dest]Delivery{}
	for _, d := range r.Deliveries {
		k := dest{d.Destination, d.EndpointID}
		if cur, ok := latest[k]; !ok || d.Round > cur.Round {
			latest[k] = d
		}
	}
	maps.DeleteFunc(latest, func(_ dest, d Delivery) bool { return d.Status == StatusCanceled })
	if len(latest) == 0 {
		if r.Dispatched {
			return StatusSkipped
		}
		return StatusPending
	}
	status := StatusDelivered
	for _, d := range latest {
		switch d.Status {
		case StatusPending:
			return StatusPending
		case StatusFailed:
			status = StatusFailed
		}
	}
	return status
}

// Errors of this package.
var (
	// ErrDeliveryNotFound is a delivery id the company does not have.
	ErrDeliveryNotFound = errors.New("webhooks: delivery not found")
	// ErrDeliveryExists is a delivery created twice; the store returns it
	// and the worker reads the existing one instead.
	ErrDeliveryExists = errors.New("webhooks: delivery exists")
	// ErrAttemptTaken is an attempt another copy of the message recorded
	// first (or a delivery no longer PENDING).
	ErrAttemptTaken = errors.New("webhooks: attempt already recorded")
	// ErrNoDestination is a resend of an event that has nowhere to go: no
	// enabled endpoint takes its kind and it has no notify_url.
	ErrNoDestination = errors.New("webhooks: no destination")
)

// Sender posts a delivery; *outbound.Client is the one used.
type Sender interface {
	Post(ctx context.Context, url string, header http.Header, body []byte) (outbound.Response, error)
}

// Queue sends a message to the webhooks queue after delay.
type Queue interface {
	Send(ctx context.Context, body []byte, delay time.Duration) error
}

// EventReader reads events.
type EventReader interface {
	// Event returns one of the company's events, or events.ErrNotFound.
	Event(ctx context.Context, companyID, eventID string) (events.Event, error)
}
