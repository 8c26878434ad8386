package webhookshttp

import (
	"fmt"
	"net/http"
	"time"

	"payments/pkg/field"
	"payments/pkg/httpapi"
	"payments/pkg/timestamp"
	"payments/pkg/webhooks"
)

// EndpointRoutes registers the endpoints a company manages with its own
// token:
//
//	POST   /webhooks/endpoints                    create (201, the secret shown once)
//	GET    /webhooks/endpoints                    every endpoint of the company, one page
//	GET    /webhooks/endpoints/{id}               one endpoint
//	PATCH  /webhooks/endpoints/{id}               url, enabled_events, description, status
//	DELETE /webhooks/endpoints/{id}               remove (200)
//	POST   /webhooks/endpoints/{id}/rotate-secret a new secret, the previous one kept for an overlap (201)
//
// Another company's endpoint answers 404.
func EndpointRoutes(rt *httpapi.Router, s *webhooks.Endpoints) {
	h := endpointHandlers{s: s}
	rt.Handle("POST /webhooks/endpoints", h.create)
	rt.Handle("GET /webhooks/endpoints", h.list)
	rt.Handle("GET /webhooks/endpoints/{id}", h.get)
	rt.Handle("PATCH /webhooks/endpoints/{id}", h.update)
	rt.Handle("DELETE /webhooks/endpoints/{id}", h.delete)
	rt.Handle("POST /webhooks/endpoints/{id}/rotate-secret", h.rotate)
}

// EndpointView is an endpoint as the API shows it. Secret is shown only in
// the answers of a create and of a rotation.
type EndpointView struct {
	ID            string                  `json:"id"`
	URL           string                  `json:"url"`
	EnabledEvents []string                `json:"enabled_events"`
	Description   string                  `json:"description"`
	Status        webhooks.EndpointStatus `json:"status"`
	// Console marks the endpoint the operator console manages (the
	// company's webhook_url).
	Console bool `json:"console"`
	// PreviousSecretExpiresAt is when a rotated-out secret stops signing;
	// null when there is none.
	PreviousSecretExpiresAt *string `json:"previous_secret_expires_at"`
	Secret                  string  `json:"secret,omitempty"`
	CreatedAt               string  `json:"created_at"`
	UpdatedAt               string  `json:"updated_at"`
}

// ViewEndpoint returns the API's view of e at now, without its secret.
func ViewEndpoint(e webhooks.Endpoint, now time.Time) EndpointView {
	v := EndpointView{
		ID: e.ID, URL: e.URL, EnabledEvents: e.EnabledEvents, Description: e.Description, Status: e.Status,
		Console: e.Console, CreatedAt: timestamp.Format(e.CreatedAt), UpdatedAt: timestamp.Format(e.UpdatedAt),
	}
	if v.EnabledEvents == nil {
		v.EnabledEvents = []string{}
	}
	if e.HasPrevious() && now.Before(e.PreviousExpiresAt) {
		at := timestamp.Format(e.PreviousExpiresAt)
		v.PreviousSecretExpiresAt = &at
	}
	return v
}

// endpointRequest is the body of a create or an update.
type endpointRequest struct {
	URL           *string                  `json:"url"`
	EnabledEvents []string                 `json:"enabled_events"`
	Description   *string                  `json:"description"`
	Status        *webhooks.EndpointStatus `json:"status"`
}

func (b endpointRequest) input() webhooks.EndpointInput { return webhooks.EndpointInput(b) }

// rotateRequest is the optional body of a rotation.
type rotateRequest struct {
	ExpirePreviousInHours *int `json:"expire_previous_in_hours"`
}

// overlap returns the overlap the request asks for.
func (b rotateRequest) overlap() (time.Duration, error) {
	if b.ExpirePreviousInHours == nil {
		return webhooks.DefaultOverlap, nil
	}
	h := *b.ExpirePreviousInHours
	if h < 0 || h > webhooks.MaxOverlapHours {
		return 0, field.Invalid("expire_previous_in_hours", fmt.Sprintf("must be a whole number of hours from 0 to %d", webhooks.MaxOverlapHours))
	}
	return time.Duration(h) * time.Hour, nil
}

type endpointHandlers struct{ s *webhooks.Endpoints }

func (h endpointHandlers) create(w http.ResponseWriter, r *http.Request) error {
	var req endpointRequest
	if err := httpapi.Decode(r, &req); err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	e, err := h.s.Create(r.Context(), cid, req.input())
	if err != nil {
		return err
	}
	v := ViewEndpoint(e, h.s.Now())
	v.Secret = e.Secret
	httpapi.Respond(w, http.StatusCreated, "webhook endpoint created; its secret is shown only now", v)
	return nil
}

func (h endpointHandlers) list(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	es, err := h.s.List(r.Context(), cid)
	if err != nil {
		return err
	}
	now := h.s.Now()
	out := make([]EndpointView, 0, len(es))
	for _, e := range es {
		out = append(out, ViewEndpoint(e, now))
	}
	// Every endpoint fits one page: MaxEndpoints and the console's.
	httpapi.RespondList(w, out, httpapi.Page{Page: 1, Limit: webhooks.MaxEndpoints + 1, Total: len(out), TotalPages: 1})
	return nil
}

func (h endpointHandlers) get(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	e, err := h.s.Get(r.Context(), cid, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "webhook endpoint retrieved", ViewEndpoint(e, h.s.Now()))
	return nil
}

func (h endpointHandlers) update(w http.ResponseWriter, r *http.Request) error {
	var req endpointRequest
	if err := httpapi.Decode(r, &req); err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	e, err := h.s.Update(r.Context(), cid, r.PathValue("id"), req.input())
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "webhook endpoint updated", ViewEndpoint(e, h.s.Now()))
	return nil
}

func (h endpointHandlers) delete(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if err := h.s.Delete(r.Context(), cid, id); err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "webhook endpoint deleted", map[string]any{"id": id, "deleted": true})
	return nil
}

func (h endpointHandlers) rotate(w http.ResponseWriter, r *http.Request) error {
	var req rotateRequest
	if err := httpapi.DecodeOptional(r, &req); err != nil {
		return err
	}
	overlap, err := req.overlap()
	if err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	e, err := h.s.Rotate(r.Context(), cid, r.PathValue("id"), overlap)
	if err != nil {
		return err
	}
	v := ViewEndpoint(e, h.s.Now())
	v.Secret = e.Secret
	httpapi.Respond(w, http.StatusCreated, "webhook endpoint secret rotated; the new secret is shown only now", v)
	return nil
}
