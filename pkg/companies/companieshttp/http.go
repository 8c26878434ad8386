// Package companieshttp is the HTTP layer of pkg/companies: its routes, which read the
// request, call the service and answer, and the wire types its answers are
// made of, converted from the domain's.
package companieshttp

import (
	"encoding/json"
	"net/http"

	"payments/pkg/companies"
	"payments/pkg/field"
	"payments/pkg/httpapi"
)

// AdminRoutes registers the operator console routes that manage companies:
//
//	POST  /admin/companies                   create, with its first owner; the client_key is shown once
//	GET   /admin/companies/{id}              read
//	PATCH /admin/companies/{id}              kyb_status, is_active, webhook_url, card_slots
//	POST  /admin/companies/{id}/client-key   rotate the client_key
//	POST  /admin/companies/{id}/owner        add an owner in the dashboard's user pool
//
// The router's guard must admit operators only.
func AdminRoutes(rt *httpapi.Router, svc *companies.Service, onboarding *companies.Onboarding) {
	h := adminHandlers{svc: svc, onboarding: onboarding}
	rt.Handle("POST /admin/companies", h.create)
	rt.Handle("GET /admin/companies/{id}", h.get)
	rt.Handle("PATCH /admin/companies/{id}", h.patch)
	rt.Handle("POST /admin/companies/{id}/client-key", h.rotate)
	rt.Handle("POST /admin/companies/{id}/owner", h.addOwner)
}

type adminHandlers struct {
	svc        *companies.Service
	onboarding *companies.Onboarding
}

type createRequest struct {
	Name      string        `json:"name"`
	KYBStatus string        `json:"kyb_status"`
	Owner     *ownerRequest `json:"owner"`
}

// ownerRequest is an owner of the dashboard: the body of
// POST /admin/companies/{id}/owner and the owner of POST /admin/companies.
type ownerRequest struct {
	Email             string `json:"email"`
	TemporaryPassword string `json:"temporary_password"`
}

// createResponse is a new company and, when one was asked for, its owner.
type createResponse struct {
	companies.Created
	Owner *companies.Owner `json:"owner,omitempty"`
}

func (h adminHandlers) create(w http.ResponseWriter, r *http.Request) error {
	var req createRequest
	if err := httpapi.Decode(r, &req); err != nil {
		return err
	}
	var owner *companies.OwnerRequest
	if req.Owner != nil {
		owner = &companies.OwnerRequest{Email: req.Owner.Email, TemporaryPassword: req.Owner.TemporaryPassword}
	}
	c, o, err := h.onboarding.Create(r.Context(), req.Name, companies.KYBStatus(req.KYBStatus), owner)
	if err != nil {
		if c.ID != "" { // the company is kept: its client_key is shown here once
			return httpapi.WithData(err, createResponse{Created: c})
		}
		return err
	}
	httpapi.Respond(w, http.StatusCreated, "company created", createResponse{Created: c, Owner: o})
	return nil
}

func (h adminHandlers) addOwner(w http.ResponseWriter, r *http.Request) error {
	var req ownerRequest
	if err := httpapi.Decode(r, &req); err != nil {
		return err
	}
	o, err := h.onboarding.AddOwner(r.Context(), r.PathValue("id"), companies.OwnerRequest{Email: req.Email, TemporaryPassword: req.TemporaryPassword})
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusCreated, "owner created", o)
	return nil
}

func (h adminHandlers) get(w http.ResponseWriter, r *http.Request) error {
	c, err := h.svc.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "company retrieved", c)
	return nil
}

// patchRequest is the PATCH body. webhook_url is kept raw to tell an absent
// field (no change) from null (clear).
type patchRequest struct {
	KYBStatus  *string         `json:"kyb_status"`
	IsActive   *bool           `json:"is_active"`
	WebhookURL json.RawMessage `json:"webhook_url"`
	CardSlots  *int            `json:"card_slots"`
}

func (h adminHandlers) patch(w http.ResponseWriter, r *http.Request) error {
	var req patchRequest
	if err := httpapi.Decode(r, &req); err != nil {
		return err
	}
	p := companies.Patch{IsActive: req.IsActive, CardSlots: req.CardSlots}
	if req.KYBStatus != nil {
		s := companies.KYBStatus(*req.KYBStatus)
		p.KYBStatus = &s
	}
	if req.WebhookURL != nil {
		var u *string
		if err := json.Unmarshal(req.WebhookURL, &u); err != nil {
			return field.Invalid("webhook_url", "must be a string or null")
		}
		if u == nil {
			u = new(string)
		}
		p.WebhookURL = u
	}
	c, err := h.svc.Update(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "company updated", c)
	return nil
}

func (h adminHandlers) rotate(w http.ResponseWriter, r *http.Request) error {
	creds, err := h.svc.RotateKey(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "client key rotated", creds)
	return nil
}
