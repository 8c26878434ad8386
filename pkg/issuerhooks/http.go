package issuerhooks

import (
	"net/http"
	"strings"

	"payments/pkg/httpapi"
)

// Routes registers POST /issuer/webhooks on rt, which must have no token
// guard: the issuer is not a company.
func Routes(rt *httpapi.Router, h *Handler) {
	rt.Handle("POST /issuer/webhooks", h.Receive)
}

// accepted is the data of the 202 answer.
type accepted struct {
	ID string `json:"id"`
}

// Receive answers one notification: 401 (ErrBadSignature) unless its
// signature verifies, 400 naming what is wrong when the body is not a
// notification, 202 with the notification's id once its raw body is on the
// queue. Only a 202 has queued anything.
func (h *Handler) Receive(w http.ResponseWriter, r *http.Request) error {
	body, err := httpapi.ReadBody(r)
	if err != nil {
		return err
	}
	// The Lambda adapter splits a header at its commas: join them again.
	n, err := h.accept(r.Context(), strings.Join(r.Header.Values(Header), ","), body)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusAccepted, "Notification accepted", accepted{ID: n.ID})
	return nil
}
