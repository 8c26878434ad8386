// Package issuerhookshttp is the HTTP layer of pkg/issuerhooks: its routes, which read the
// request, call the service and answer, and the wire types its answers are
// made of, converted from the domain's.
package issuerhookshttp

import (
	"encoding/json"
	"net/http"
	"strings"

	"payments/pkg/httpapi"
	"payments/pkg/issuerhooks"
	"payments/pkg/providers/issuer/stripeissuing"
)

// Routes registers POST /issuer/webhooks on rt, which must have no token
// guard: the issuer is not a company.
func Routes(rt *httpapi.Router, h *issuerhooks.Handler) {
	rt.Handle("POST /issuer/webhooks", Receive(h))
}

// AuthorizationRoutes registers POST /issuer/authorizations on rt, which
// must have no token guard.
func AuthorizationRoutes(rt *httpapi.Router, a *issuerhooks.Authorizations) {
	rt.Handle("POST /issuer/authorizations", ReceiveAuthorizations(a))
}

// accepted is the data of the 202 answer.
type accepted struct {
	ID string `json:"id"`
}

// receive answers one notification: 401 (ErrBadSignature) unless its
// signature verifies, 400 naming what is wrong when the body is not a
// notification, 202 with the notification's id once its raw body is on the
// queue. Only a 202 has queued anything.
func receive(h *issuerhooks.Handler, w http.ResponseWriter, r *http.Request) error {
	body, err := httpapi.ReadBody(r)
	if err != nil {
		return err
	}
	n, err := h.Accept(r.Context(), signature(r), body)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusAccepted, "Notification accepted", accepted{ID: n.ID})
	return nil
}

// receiveAuthorizations answers one authorization request: 401 (ErrBadSignature) unless
// its signature verifies, 400 naming what is wrong when the body is not a
// request, 200 with the decision once it is written; the same decision to
// a retry of the request.
func receiveAuthorizations(a *issuerhooks.Authorizations, w http.ResponseWriter, r *http.Request) error {
	body, err := httpapi.ReadBody(r)
	if err != nil {
		return err
	}
	answer, err := a.Decide(r.Context(), signature(r), body)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Authorization "+strings.ToLower(answer.Decision), answer)
	return nil
}

// StripeRoutes registers POST /issuer/stripe/webhooks on rt, which must
// have no token guard: Stripe is not a company.
func StripeRoutes(rt *httpapi.Router, s *issuerhooks.Stripe) {
	rt.Handle("POST /issuer/stripe/webhooks", ReceiveStripe(s))
}

// receiveStripe answers one of Stripe's events (Handle): 401
// (ErrBadStripeSignature) unless its Stripe-Signature verifies, 400 naming
// what is wrong in a signed event we cannot read; an
// issuing_authorization.request's decision in Stripe's protocol, 200
// {"approved": …} with the Stripe-Version header; 200 with the event's id
// for any other event, once queued or acknowledged. Only a 200 has done
// anything.
func receiveStripe(s *issuerhooks.Stripe, w http.ResponseWriter, r *http.Request) error {
	body, err := httpapi.ReadBody(r)
	if err != nil {
		return err
	}
	id, answer, err := s.Handle(r.Context(), header(r, stripeissuing.SignatureHeader), body)
	if err != nil {
		return err
	}
	if answer == nil {
		httpapi.Respond(w, http.StatusOK, "Event accepted", accepted{ID: id})
		return nil
	}
	w.Header().Set("Stripe-Version", stripeissuing.APIVersion)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	return json.NewEncoder(w).Encode(answer)
}

// signature returns the request's X-Issuer-Signature.
func signature(r *http.Request) string { return header(r, issuerhooks.Header) }

// header returns the request's header name. The Lambda adapter splits a
// header at its commas: they are joined again.
func header(r *http.Request, name string) string {
	return strings.Join(r.Header.Values(name), ",")
}

// Receive returns the handler of POST /issuer/webhooks over h.
func Receive(h *issuerhooks.Handler) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error { return receive(h, w, r) }
}

// ReceiveAuthorizations returns the handler of POST /issuer/authorizations
// over a.
func ReceiveAuthorizations(a *issuerhooks.Authorizations) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error { return receiveAuthorizations(a, w, r) }
}

// ReceiveStripe returns the handler of Stripe's webhook events over s.
func ReceiveStripe(s *issuerhooks.Stripe) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error { return receiveStripe(s, w, r) }
}
