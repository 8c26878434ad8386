// Package webhookshttp is the HTTP layer of pkg/webhooks: its routes, which read the
// request, call the service and answer, and the wire types its answers are
// made of, converted from the domain's.
package webhookshttp

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/httpapi"
	"payments/pkg/timestamp"
	"payments/pkg/webhooks"
)

// DefaultPageSize is the page size of the delivery log and of GET /events.
const DefaultPageSize = 10

// Routes registers the delivery log, our addition to the spec, behind the
// company token guard:
//
//	GET  /webhooks/events              the company's events, newest first, with deliveries and attempts
//	GET  /webhooks/events/{id}         one event
//	POST /webhooks/events/{id}/resend  queue a fresh delivery round of the same body (202);
//	                                   {"endpoint_id"} limits it to one endpoint
//
// and the Events API, also ours (eventsapi.go, eventsapi_http.go):
//
//	GET  /events                       the company's events as delivered, newest first
//	GET  /events/{id}                  one event as delivered
//
// Another company's event answers 404.
func Routes(rt *httpapi.Router, l *webhooks.Log) {
	h := logHandlers{log: l}
	rt.Handle("GET /webhooks/events", h.list)
	rt.Handle("GET /webhooks/events/{id}", h.get)
	rt.Handle("POST /webhooks/events/{id}/resend", h.resend)
	e := eventHandlers{log: l}
	rt.Handle("GET /events", e.list)
	rt.Handle("GET /events/{id}", e.get)
}

// AdminRoutes registers the operator console routes of signing secrets:
//
//	POST   /admin/companies/{id}/webhook-secret  create or rotate; the secret is shown once (201, data.secret)
//	DELETE /admin/companies/{id}/webhook-secret  turn signing off (200)
//
// The router's guard must admit operators only.
func AdminRoutes(rt *httpapi.Router, s *webhooks.SigningSecrets) {
	rt.Handle("POST /admin/companies/{id}/webhook-secret", func(w http.ResponseWriter, r *http.Request) error {
		issued, err := s.Rotate(r.Context(), r.PathValue("id"))
		if err != nil {
			return err
		}
		httpapi.Respond(w, http.StatusCreated, "webhook signing secret created; it is shown only once", issued)
		return nil
	})
	rt.Handle("DELETE /admin/companies/{id}/webhook-secret", func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		if err := s.Disable(r.Context(), id); err != nil {
			return err
		}
		httpapi.Respond(w, http.StatusOK, "webhook signing turned off", map[string]any{"company_id": id, "signing": false})
		return nil
	})
}

type logHandlers struct{ log *webhooks.Log }

func (h logHandlers) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r, DefaultPageSize)
	if err != nil {
		return err
	}
	q, err := ParseQuery(r)
	if err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	res, err := h.log.List(r.Context(), cid, q, page)
	if err != nil {
		return err
	}
	out := make([]EventView, 0, len(res.Items))
	for _, rec := range res.Items {
		v, err := View(rec)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	httpapi.RespondList(w, out, httpapi.Pagination(r, page, res.Total, res.Next))
	return nil
}

func (h logHandlers) get(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	rec, err := h.log.Get(r.Context(), cid, r.PathValue("id"))
	if err != nil {
		return err
	}
	v, err := View(rec)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "event retrieved", v)
	return nil
}

func (h logHandlers) resend(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		EndpointID string `json:"endpoint_id"`
	}
	if err := httpapi.DecodeOptional(r, &req); err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	rec, err := h.log.Resend(r.Context(), cid, r.PathValue("id"), req.EndpointID)
	if err != nil {
		return err
	}
	v, err := View(rec)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusAccepted, "event queued for redelivery", v)
	return nil
}

// ParseQuery reads the filters of GET /webhooks/events: event (a kind of
// the catalogue), status (PENDING, DELIVERED, FAILED or SKIPPED), from_date
// (inclusive) and to_date (exclusive) as RFC 3339 date-times or YYYY-MM-DD
// dates (midnight UTC). A bad value is a 400 naming the parameter.
func ParseQuery(r *http.Request) (webhooks.Query, error) {
	v := r.URL.Query()
	var q webhooks.Query
	if s := v.Get("event"); s != "" {
		if !events.Kind(s).Known() {
			return q, field.Invalid("event", "must be an event name of the catalogue (docs/events.md)")
		}
		q.Kind = events.Kind(s)
	}
	if s := v.Get("status"); s != "" {
		if !slices.Contains(webhooks.Statuses, webhooks.Status(s)) {
			names := make([]string, len(webhooks.Statuses))
			for i, st := range webhooks.Statuses {
				names[i] = string(st)
			}
			return q, field.Invalid("status", "must be one of "+strings.Join(names, ", "))
		}
		q.Status = webhooks.Status(s)
	}
	var err error
	q.From, q.To, err = httpapi.ParseDateRange(r)
	return q, err
}

// EventView is an event in the delivery log. Its times, and its
// deliveries' and attempts', are written by timestamp.Format.
type EventView struct {
	ID    string      `json:"id"`
	Event events.Kind `json:"event"`
	// Sequence is the event's number among the events about its object
	// (the body's "sequence"); null for an event made before sequences.
	Sequence  *int64          `json:"sequence"`
	CreatedAt string          `json:"created_at"`
	Status    webhooks.Status `json:"status"`
	Payload   json.RawMessage `json:"payload"`
	// Deliveries are ordered by round, then destination.
	Deliveries []DeliveryView `json:"deliveries"`
}

// DeliveryView is a delivery in the delivery log. The signature itself is
// not shown; Signed tells whether one was sent.
type DeliveryView struct {
	ID          string               `json:"id"`
	Destination webhooks.Destination `json:"destination"`
	// EndpointID is the endpoint of a webhook delivery, null for a
	// notify_url one (and for webhook deliveries made before endpoints).
	EndpointID *string         `json:"endpoint_id"`
	URL        string          `json:"url"`
	Round      int             `json:"round"`
	Status     webhooks.Status `json:"status"`
	Signed     bool            `json:"signed"`
	CreatedAt  string          `json:"created_at"`
	Attempts   []AttemptView   `json:"attempts"`
}

// AttemptView is an attempt in the delivery log: status_code is null when
// no answer came, error is null when one did.
type AttemptView struct {
	Attempt    int     `json:"attempt"`
	At         string  `json:"at"`
	StatusCode *int    `json:"status_code"`
	Error      *string `json:"error"`
	DurationMS int64   `json:"duration_ms"`
}

// View returns the delivery log's view of r.
func View(r webhooks.Record) (EventView, error) {
	payload, err := webhooks.Payload(r.Event)
	if err != nil {
		return EventView{}, err
	}
	v := EventView{
		ID: r.Event.ID, Event: r.Event.Kind, CreatedAt: timestamp.Format(r.Event.CreatedAt), Status: r.Status(),
		Payload: payload, Deliveries: make([]DeliveryView, 0, len(r.Deliveries)),
	}
	if n := r.Event.Sequence; n > 0 {
		v.Sequence = &n
	}
	for _, d := range r.Deliveries {
		dv := DeliveryView{
			ID: d.ID, Destination: d.Destination, URL: d.URL, Round: d.Round, Status: d.Status,
			Signed: d.Signature != "", CreatedAt: timestamp.Format(d.CreatedAt), Attempts: make([]AttemptView, 0, len(d.Attempts)),
		}
		if d.EndpointID != "" {
			id := d.EndpointID
			dv.EndpointID = &id
		}
		for _, a := range d.Attempts {
			av := AttemptView{Attempt: a.Number, At: timestamp.Format(a.At), DurationMS: a.Duration.Milliseconds()}
			if a.Error != "" {
				e := a.Error
				av.Error = &e
			} else {
				c := a.StatusCode
				av.StatusCode = &c
			}
			dv.Attempts = append(dv.Attempts, av)
		}
		v.Deliveries = append(v.Deliveries, dv)
	}
	return v, nil
}
