package webhookshttp

import (
	"encoding/json"
	"net/http"

	"payments/pkg/events"
	"payments/pkg/httpapi"
	"payments/pkg/timestamp"
	"payments/pkg/webhooks"
)

// EventItem is an event as GET /events shows it. Body is the body every
// delivery of the event sent (and will send), byte for byte: the envelope
// {"event": …, "data": …}.
type EventItem struct {
	ID        string          `json:"id"`
	Type      events.Kind     `json:"type"`
	CreatedAt string          `json:"created_at"`
	Body      json.RawMessage `json:"body"`
}

// Item returns the Events API's view of e.
func Item(e events.Event) EventItem {
	return EventItem{ID: e.ID, Type: e.Kind, CreatedAt: timestamp.Format(e.CreatedAt), Body: json.RawMessage(e.Body)}
}

// ParseEventQuery reads the filters of GET /events: type (ParseType),
// created_gte (inclusive) and created_lt (exclusive) as RFC 3339
// date-times or YYYY-MM-DD dates (midnight UTC). A bad value is a 400
// naming the parameter.
func ParseEventQuery(r *http.Request) (webhooks.EventQuery, error) {
	q, err := webhooks.ParseType(r.URL.Query().Get("type"))
	if err != nil {
		return q, err
	}
	q.From, q.To, err = httpapi.ParseDates(r, "created_gte", "created_lt")
	return q, err
}

type eventHandlers struct{ log *webhooks.Log }

func (h eventHandlers) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r, DefaultPageSize)
	if err != nil {
		return err
	}
	q, err := ParseEventQuery(r)
	if err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	res, err := h.log.Events(r.Context(), cid, q, page)
	if err != nil {
		return err
	}
	out := make([]EventItem, 0, len(res.Items))
	for _, e := range res.Items {
		out = append(out, Item(e))
	}
	httpapi.RespondList(w, out, httpapi.Pagination(r, page, res.Total, res.Next))
	return nil
}

func (h eventHandlers) get(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	e, err := h.log.Event(r.Context(), cid, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "event retrieved", Item(e))
	return nil
}
