package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"payments/pkg/events"
	"payments/pkg/page"
	"payments/pkg/sessions"
	"payments/pkg/webhooks"
)

// DeliveryLog is a company's events and their deliveries (webhooks.Log,
// the service of the API's delivery log, resend and Events API).
type DeliveryLog interface {
	List(ctx context.Context, companyID string, q webhooks.Query, p page.Request) (page.Result[webhooks.Record], error)
	Get(ctx context.Context, companyID, eventID string) (webhooks.Record, error)
	Resend(ctx context.Context, companyID, eventID, endpointID string) (webhooks.Record, error)
	Events(ctx context.Context, companyID string, q webhooks.EventQuery, p page.Request) (page.Result[events.Event], error)
	Event(ctx context.Context, companyID, eventID string) (events.Event, error)
}

// logPageSize is how many events a page of the delivery log and of the
// events shows; maxLogPage is the deepest page number they take.
const (
	logPageSize = 20
	maxLogPage  = 500
)

// eventRow is an event as the lists show it.
type eventRow struct {
	ID, Kind, Created, Status string
}

// deliveryRow is a delivery of an event, with its attempts.
type deliveryRow struct {
	Destination, URL, Status string
	Round                    int
	Signed                   bool
	Attempts                 []attemptRow
}

// attemptRow is one attempt of a delivery.
type attemptRow struct {
	Number         int
	At, Answer     string
	DurationMillis int64
}

// logData is the delivery log's and the events' pages'.
type logData struct {
	Section string
	Events  []eventRow
	// Kind filters the list; Kinds are its choices.
	Kind  string
	Kinds []string
	// Previous and Next link the neighbouring pages, "" when none.
	Previous, Next string
	Page           int
	// Event is the one event of a detail page, with its deliveries and
	// body.
	Event      eventRow
	Deliveries []deliveryRow
	Body       string
}

// logQuery reads the kind filter and the page number of a list's URL: an
// unknown kind or page is refused with the sentence that says so.
func logQuery(r *http.Request) (kind events.Kind, n int, problem string) {
	q := r.URL.Query()
	kind = events.Kind(q.Get("event"))
	if kind != "" && !kind.Known() {
		return "", 1, "Event type: choose one of the list."
	}
	n = 1
	if s := q.Get("page"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 || n > maxLogPage {
			return kind, 1, "Page: must be a number from 1 to " + strconv.Itoa(maxLogPage) + "."
		}
	}
	return kind, n, ""
}

// pageLinks sets d's links to the pages around page n of path.
func (d *logData) pageLinks(path string, kind events.Kind, n int, more bool) {
	link := func(n int) string {
		v := url.Values{"page": {strconv.Itoa(n)}}
		if kind != "" {
			v.Set("event", string(kind))
		}
		return path + "?" + v.Encode()
	}
	d.Page, d.Kind = n, string(kind)
	if n > 1 {
		d.Previous = link(n - 1)
	}
	if more && n < maxLogPage {
		d.Next = link(n + 1)
	}
	for _, k := range events.Kinds() {
		d.Kinds = append(d.Kinds, string(k))
	}
}

// deliveriesPage lists the company's events with their delivery status,
// newest first.
func (h *Handler) deliveriesPage(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	h.logList(w, r, "deliveries", "Delivery log", func(kind events.Kind, p page.Request) ([]eventRow, bool, error) {
		res, err := h.deps.Log.List(r.Context(), s.CompanyID, webhooks.Query{Kind: kind}, p)
		var rows []eventRow
		for _, rec := range res.Items {
			rows = append(rows, deliveredRow(rec))
		}
		return rows, res.Next != "", err
	})
}

// eventsPage lists the company's events as delivered (the Events API),
// newest first.
func (h *Handler) eventsPage(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	h.logList(w, r, "events", "Events", func(kind events.Kind, p page.Request) ([]eventRow, bool, error) {
		res, err := h.deps.Log.Events(r.Context(), s.CompanyID, webhooks.EventQuery{Kind: kind}, p)
		var rows []eventRow
		for _, e := range res.Items {
			rows = append(rows, eventRow{ID: e.ID, Kind: string(e.Kind), Created: when(e.CreatedAt)})
		}
		return rows, res.Next != "", err
	})
}

// logList renders a Developers list of events, section (the page
// developers-<section> at /dashboard/developers/<section>): the page of
// rows list gives for the kind filter and the page number of the URL
// (logQuery), and whether more follow.
func (h *Handler) logList(w http.ResponseWriter, r *http.Request, section, title string,
	list func(kind events.Kind, p page.Request) ([]eventRow, bool, error)) {
	path, name := "/dashboard/developers/"+section, "developers-"+section
	kind, n, problem := logQuery(r)
	d := logData{Section: section}
	if problem != "" {
		d.pageLinks(path, "", 1, false)
		h.render(w, r, http.StatusBadRequest, name, view{Title: title, Nav: "developers", Error: problem, Data: d})
		return
	}
	rows, more, err := list(kind, page.Request{Page: n, Limit: logPageSize})
	if err != nil {
		h.failed(w, r, err)
		return
	}
	d.Events = rows
	d.pageLinks(path, kind, n, more)
	h.render(w, r, http.StatusOK, name, view{Title: title, Nav: "developers", Data: d})
}

// deliveredRow is rec's event as the delivery log shows it, with its
// delivery status.
func deliveredRow(rec webhooks.Record) eventRow {
	return eventRow{ID: rec.Event.ID, Kind: string(rec.Event.Kind), Created: when(rec.Event.CreatedAt), Status: string(rec.Status())}
}

// deliveryPage shows one event's deliveries and attempts, and the way to
// resend it.
func (h *Handler) deliveryPage(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	v := view{Title: "Event deliveries", Nav: "developers"}
	if r.URL.Query().Has("resent") {
		v.Notice = "The event is queued for delivery again: its new round appears here once it is sent."
	}
	h.showDeliveries(w, r, s, http.StatusOK, v)
}

// showDeliveries renders the event of the URL with its deliveries under v:
// another company's event, like an unknown id, is the 404 page.
func (h *Handler) showDeliveries(w http.ResponseWriter, r *http.Request, s sessions.Session, status int, v view) {
	rec, err := h.deps.Log.Get(r.Context(), s.CompanyID, r.PathValue("id"))
	switch {
	case errors.Is(err, events.ErrNotFound):
		h.notFound(w, r)
		return
	case err != nil:
		h.failed(w, r, err)
		return
	}
	d := logData{Section: "deliveries", Event: deliveredRow(rec)}
	for _, dl := range rec.Deliveries {
		dr := deliveryRow{Destination: string(dl.Destination), URL: dl.URL, Status: string(dl.Status), Round: dl.Round, Signed: dl.Signature != ""}
		for _, a := range dl.Attempts {
			answer := a.Error
			if answer == "" {
				answer = "HTTP " + strconv.Itoa(a.StatusCode)
			}
			dr.Attempts = append(dr.Attempts, attemptRow{Number: a.Number, At: when(a.At), Answer: answer, DurationMillis: a.Duration.Milliseconds()})
		}
		d.Deliveries = append(d.Deliveries, dr)
	}
	v.Data = d
	h.render(w, r, status, "developers-delivery", v)
}

// resend queues a fresh delivery round of the event to its destinations
// as they are now (webhooks.Log.Resend, the API's POST
// /webhooks/events/{id}/resend).
func (h *Handler) resend(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	id := r.PathValue("id")
	_, err := h.deps.Log.Resend(r.Context(), s.CompanyID, id, "")
	switch {
	case errors.Is(err, events.ErrNotFound):
		h.notFound(w, r)
		return
	case errors.Is(err, webhooks.ErrNoDestination):
		h.showDeliveries(w, r, s, http.StatusConflict, view{Title: "Event deliveries", Nav: "developers",
			Error: "This event has nowhere to go: no enabled endpoint takes its type. Create or enable one first."})
		return
	case err != nil:
		h.failed(w, r, err)
		return
	}
	h.record(r, s, actionDeliveryResent, id)
	http.Redirect(w, r, "/dashboard/developers/deliveries/"+id+"?resent", http.StatusSeeOther)
}

// eventPage shows one event's body, as every delivery of it sends it,
// indented.
func (h *Handler) eventPage(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	e, err := h.deps.Log.Event(r.Context(), s.CompanyID, r.PathValue("id"))
	switch {
	case errors.Is(err, events.ErrNotFound):
		h.notFound(w, r)
		return
	case err != nil:
		h.failed(w, r, err)
		return
	}
	var body bytes.Buffer
	if json.Indent(&body, e.Body, "", "  ") != nil {
		body.Reset()
		body.Write(e.Body)
	}
	d := logData{Section: "events", Event: eventRow{ID: e.ID, Kind: string(e.Kind), Created: when(e.CreatedAt)}, Body: body.String()}
	h.render(w, r, http.StatusOK, "developers-event", view{Title: "Event " + string(e.Kind), Nav: "developers", Data: d})
}
