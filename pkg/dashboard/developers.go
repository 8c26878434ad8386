package dashboard

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"payments/pkg/companies"
	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/sessions"
	"payments/pkg/webhooks"
)

// CompanyKeys is what the dashboard does with a company's API credentials
// (companies.Service, as the console's POST
// /admin/companies/{id}/rotate-key): read its client_id, roll its key.
type CompanyKeys interface {
	Get(ctx context.Context, id string) (companies.Company, error)
	RotateKey(ctx context.Context, id string) (companies.Credentials, error)
}

// WebhookEndpoints are a company's webhook endpoints (webhooks.Endpoints,
// the service of the API's /webhooks/endpoints).
type WebhookEndpoints interface {
	List(ctx context.Context, companyID string) ([]webhooks.Endpoint, error)
	Get(ctx context.Context, companyID, id string) (webhooks.Endpoint, error)
	Create(ctx context.Context, companyID string, in webhooks.EndpointInput) (webhooks.Endpoint, error)
	Update(ctx context.Context, companyID, id string, in webhooks.EndpointInput) (webhooks.Endpoint, error)
	Delete(ctx context.Context, companyID, id string) error
	Rotate(ctx context.Context, companyID, id string, overlap time.Duration) (webhooks.Endpoint, error)
}

// The activity log's actions of the Developers pages.
const (
	actionKeyRolled        = "Client key rolled"
	actionEndpointCreated  = "Webhook endpoint created"
	actionEndpointRotated  = "Webhook endpoint secret rotated"
	actionEndpointEnabled  = "Webhook endpoint enabled"
	actionEndpointDisabled = "Webhook endpoint disabled"
	actionEndpointDeleted  = "Webhook endpoint deleted"
	actionDeliveryResent   = "Webhook delivery resent"
)

// overlaps are the choices of how long a rotated-out secret keeps signing,
// in hours (webhooks.MaxOverlapHours at most), the default first.
var overlaps = []int{24, 0, 1, 72, webhooks.MaxOverlapHours}

// developersRoutes are the Developers pages: the API keys, the webhook
// endpoints, the delivery log and the events. They show and change what a
// company's programs sign in and are called with, so every one needs
// ManageDevelopers, reading included (docs/dashboard.md).
func (h *Handler) developersRoutes() []route {
	return []route{
		{"GET /dashboard/developers", ManageDevelopers, h.keysPage},
		{"GET /dashboard/developers/roll-key", ManageDevelopers, h.rollKeyPage},
		{"POST /dashboard/developers/roll-key", ManageDevelopers, h.rollKey},
		{"GET /dashboard/developers/webhooks", ManageDevelopers, h.endpointsPage},
		{"POST /dashboard/developers/webhooks", ManageDevelopers, h.createEndpoint},
		{"GET /dashboard/developers/webhooks/{id}", ManageDevelopers, h.endpointPage},
		{"POST /dashboard/developers/webhooks/{id}/rotate", ManageDevelopers, h.rotateEndpoint},
		{"POST /dashboard/developers/webhooks/{id}/status", ManageDevelopers, h.setEndpointStatus},
		{"POST /dashboard/developers/webhooks/{id}/delete", ManageDevelopers, h.deleteEndpoint},
		{"GET /dashboard/developers/deliveries", ManageDevelopers, h.deliveriesPage},
		{"GET /dashboard/developers/deliveries/{id}", ManageDevelopers, h.deliveryPage},
		{"POST /dashboard/developers/deliveries/{id}/resend", ManageDevelopers, h.resend},
		{"GET /dashboard/developers/events", ManageDevelopers, h.eventsPage},
		{"GET /dashboard/developers/events/{id}", ManageDevelopers, h.eventPage},
	}
}

// keysData is the API keys pages'.
type keysData struct {
	Section  string
	ClientID string
	// ClientKey is the key just rolled, shown once.
	ClientKey string
}

// keysPage shows the company's client_id and the way to roll its key.
func (h *Handler) keysPage(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	c, err := h.deps.Keys.Get(r.Context(), s.CompanyID)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "developers-keys", view{Title: "API keys", Nav: "developers", Data: keysData{Section: "keys", ClientID: c.ClientID}})
}

// rollKeyPage asks to confirm rolling the key, saying what it does.
func (h *Handler) rollKeyPage(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	h.render(w, r, http.StatusOK, "developers-roll-key", view{Title: "Roll the client key", Nav: "developers", Data: keysData{Section: "keys"}})
}

// rollKey rolls the company's key (companies.Service.RotateKey) once the
// person has confirmed it, and shows the new key in its answer, once:
// never in a URL or a redirect.
func (h *Handler) rollKey(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	if r.PostFormValue("confirm") != "yes" {
		h.render(w, r, http.StatusBadRequest, "developers-roll-key", view{Title: "Roll the client key", Nav: "developers",
			Error: "Confirm that you want to roll the key.", Data: keysData{Section: "keys"}})
		return
	}
	creds, err := h.deps.Keys.RotateKey(r.Context(), s.CompanyID)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	h.record(r, s, actionKeyRolled, creds.ClientID)
	h.render(w, r, http.StatusOK, "developers-new-key", view{Title: "New client key", Nav: "developers",
		Notice: "The key is rolled: the old key no longer works.", Data: keysData{Section: "keys", ClientID: creds.ClientID, ClientKey: creds.ClientKey}})
}

// endpointRow is an endpoint as the pages show it.
type endpointRow struct {
	ID, URL, Description, Status, Events string
	Enabled, Console                     bool
	// PreviousExpires is when a rotated-out secret stops signing, "" when
	// none does.
	PreviousExpires string
	Created         string
}

// endpointsData is the endpoints' pages'.
type endpointsData struct {
	Section   string
	Endpoints []endpointRow
	Endpoint  endpointRow
	// Form is the create form as it was sent.
	Form endpointForm
	// Kinds are the event kinds an endpoint may take.
	Kinds []string
	// Overlaps are the choices of a rotation's overlap, in hours.
	Overlaps []int
	// Secret is a signing secret just made, shown once.
	Secret string
}

// endpointForm is the create form's values.
type endpointForm struct {
	URL, Description string
	Events           []string
}

func row(e webhooks.Endpoint, now time.Time) endpointRow {
	er := endpointRow{ID: e.ID, URL: e.URL, Description: e.Description, Status: string(e.Status), Enabled: e.Status == webhooks.EndpointEnabled,
		Console: e.Console, Events: strings.Join(e.EnabledEvents, ", "), Created: when(e.CreatedAt)}
	if slices.Contains(e.EnabledEvents, webhooks.AllEvents) {
		er.Events = "All events"
	}
	if e.HasPrevious() && now.Before(e.PreviousExpiresAt) {
		er.PreviousExpires = when(e.PreviousExpiresAt)
	}
	return er
}

func (h *Handler) endpointsData(ctx context.Context, companyID string) (endpointsData, error) {
	es, err := h.deps.Endpoints.List(ctx, companyID)
	if err != nil {
		return endpointsData{}, err
	}
	d := endpointsData{Section: "webhooks"}
	for _, k := range events.Kinds() {
		d.Kinds = append(d.Kinds, string(k))
	}
	now := h.deps.Now()
	for _, e := range es {
		d.Endpoints = append(d.Endpoints, row(e, now))
	}
	return d, nil
}

// endpointsPage lists the company's endpoints, with the form to create one.
func (h *Handler) endpointsPage(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	d, err := h.endpointsData(r.Context(), s.CompanyID)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	v := view{Title: "Webhook endpoints", Nav: "developers", Data: d}
	if r.URL.Query().Has("deleted") {
		v.Notice = "The endpoint is deleted."
	}
	h.render(w, r, http.StatusOK, "developers-webhooks", v)
}

// createEndpoint creates an endpoint (webhooks.Endpoints.Create) and shows
// its secret, once.
func (h *Handler) createEndpoint(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	r.ParseForm()
	f := endpointForm{URL: strings.TrimSpace(r.PostFormValue("url")), Description: strings.TrimSpace(r.PostFormValue("description")), Events: r.PostForm["events"]}
	in := webhooks.EndpointInput{URL: &f.URL, Description: &f.Description, EnabledEvents: f.Events}
	if in.EnabledEvents == nil {
		in.EnabledEvents = []string{}
	}
	e, err := h.deps.Endpoints.Create(r.Context(), s.CompanyID, in)
	if err != nil {
		msg, ok := endpointWords(err, f.Events)
		if !ok {
			h.failed(w, r, err)
			return
		}
		d, err := h.endpointsData(r.Context(), s.CompanyID)
		if err != nil {
			h.failed(w, r, err)
			return
		}
		d.Form = f
		h.render(w, r, http.StatusBadRequest, "developers-webhooks", view{Title: "Webhook endpoints", Nav: "developers", Error: msg, Data: d})
		return
	}
	h.record(r, s, actionEndpointCreated, e.ID)
	h.showSecret(w, r, e, "The endpoint is created.")
}

// showSecret shows endpoint e's secret just made, once.
func (h *Handler) showSecret(w http.ResponseWriter, r *http.Request, e webhooks.Endpoint, notice string) {
	h.render(w, r, http.StatusOK, "developers-secret", view{Title: "Signing secret", Nav: "developers", Notice: notice,
		Data: endpointsData{Section: "webhooks", Endpoint: row(e, h.deps.Now()), Secret: e.Secret}})
}

// endpointPage shows one endpoint and what can be done with it.
func (h *Handler) endpointPage(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	e, ok := h.endpoint(w, r, s)
	if !ok {
		return
	}
	v := view{Title: "Webhook endpoint", Nav: "developers", Data: endpointsData{Section: "webhooks", Endpoint: row(e, h.deps.Now()), Overlaps: overlaps}}
	switch r.URL.Query().Get("changed") {
	case "enabled":
		v.Notice = "The endpoint is enabled."
	case "disabled":
		v.Notice = "The endpoint is disabled: it receives no deliveries."
	}
	h.render(w, r, http.StatusOK, "developers-webhook", v)
}

// endpoint reads the endpoint of the URL: another company's, like an
// unknown id, is the 404 page.
func (h *Handler) endpoint(w http.ResponseWriter, r *http.Request, s sessions.Session) (webhooks.Endpoint, bool) {
	e, err := h.deps.Endpoints.Get(r.Context(), s.CompanyID, r.PathValue("id"))
	switch {
	case errors.Is(err, webhooks.ErrEndpointNotFound):
		h.notFound(w, r)
		return e, false
	case err != nil:
		h.failed(w, r, err)
		return e, false
	}
	return e, true
}

// rotateEndpoint gives the endpoint a new secret, the old one signing
// beside it for the overlap chosen, and shows the new one, once.
func (h *Handler) rotateEndpoint(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	hours, err := strconv.Atoi(r.PostFormValue("overlap"))
	if err != nil || !slices.Contains(overlaps, hours) {
		e, ok := h.endpoint(w, r, s)
		if ok {
			h.render(w, r, http.StatusBadRequest, "developers-webhook", view{Title: "Webhook endpoint", Nav: "developers",
				Error: "Old secret keeps signing: choose one of the periods offered.", Data: endpointsData{Section: "webhooks", Endpoint: row(e, h.deps.Now()), Overlaps: overlaps}})
		}
		return
	}
	e, err := h.deps.Endpoints.Rotate(r.Context(), s.CompanyID, r.PathValue("id"), time.Duration(hours)*time.Hour)
	if !h.endpointChanged(w, r, err) {
		return
	}
	h.record(r, s, actionEndpointRotated, e.ID)
	notice := "The secret is rotated: the old one stops signing now."
	if hours > 0 {
		notice = "The secret is rotated: the old one keeps signing beside it until " + when(e.PreviousExpiresAt) + "."
	}
	h.showSecret(w, r, e, notice)
}

// setEndpointStatus enables or disables the endpoint.
func (h *Handler) setEndpointStatus(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	status, action := webhooks.EndpointEnabled, actionEndpointEnabled
	if r.PostFormValue("status") != string(webhooks.EndpointEnabled) {
		status, action = webhooks.EndpointDisabled, actionEndpointDisabled
	}
	e, err := h.deps.Endpoints.Update(r.Context(), s.CompanyID, r.PathValue("id"), webhooks.EndpointInput{Status: &status})
	if !h.endpointChanged(w, r, err) {
		return
	}
	h.record(r, s, action, e.ID)
	http.Redirect(w, r, "/dashboard/developers/webhooks/"+e.ID+"?changed="+string(status), http.StatusSeeOther)
}

// deleteEndpoint deletes the endpoint.
func (h *Handler) deleteEndpoint(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	id := r.PathValue("id")
	if !h.endpointChanged(w, r, h.deps.Endpoints.Delete(r.Context(), s.CompanyID, id)) {
		return
	}
	h.record(r, s, actionEndpointDeleted, id)
	http.Redirect(w, r, "/dashboard/developers/webhooks?deleted", http.StatusSeeOther)
}

// endpointChanged answers the error of a change to an endpoint, if any,
// and reports whether there was none.
func (h *Handler) endpointChanged(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, webhooks.ErrEndpointNotFound):
		h.notFound(w, r)
	default:
		h.failed(w, r, err)
	}
	return false
}

// endpointWords returns the sentence that tells a person what is wrong
// with the create form, naming its field, for the errors a person can
// fix; false for a failure.
func endpointWords(err error, checked []string) (string, bool) {
	var fe *field.Error
	switch {
	case errors.Is(err, webhooks.ErrTooManyEndpoints):
		return "You have " + strconv.Itoa(webhooks.MaxEndpoints) + " endpoints, the most a company may have: delete one first.", true
	case !errors.As(err, &fe):
		return "", false
	case fe.Field == "enabled_events" && len(checked) == 0:
		return "Events: choose All events or at least one event.", true
	case fe.Field == "enabled_events" && slices.Contains(checked, webhooks.AllEvents):
		return "Events: All events takes every event; leave the others unchecked.", true
	}
	label := map[string]string{"url": "Endpoint URL", "enabled_events": "Events", "description": "Description"}[fe.Field]
	if label == "" {
		label = fe.Field
	}
	return label + " " + fe.Problem + ".", true
}

// shownOnce is a secret shown once, in a read-only field named Name with a
// Copy button (assets/copy.js).
type shownOnce struct{ ID, Name, Value string }

// shown returns the shownOnce of the templates' "developers-shown-once".
func shown(id, name, value string) shownOnce { return shownOnce{id, name, value} }

// hours words an overlap of n hours.
func hours(n int) string {
	switch {
	case n == 0:
		return "no time: it stops now"
	case n == 1:
		return "1 hour"
	case n%24 == 0 && n > 24:
		return strconv.Itoa(n/24) + " days"
	}
	return strconv.Itoa(n) + " hours"
}
