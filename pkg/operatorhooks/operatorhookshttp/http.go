// Package operatorhookshttp is the HTTP layer of pkg/operatorhooks: its routes, which read the
// request, call the service and answer, and the wire types its answers are
// made of, converted from the domain's.
package operatorhookshttp

import (
	"net/http"
	"strings"

	"payments/pkg/httpapi"
	"payments/pkg/operatorhooks"
)

// Routes registers POST /operator/callbacks/pawapay on rt, which must have
// no token guard: the operator is not a company.
func Routes(rt *httpapi.Router, h *operatorhooks.Handler) {
	rt.Handle("POST /operator/callbacks/pawapay", func(w http.ResponseWriter, r *http.Request) error { return receive(h, w, r) })
}

// received is the data of the 200 answer.
type received struct {
	TransactionID string `json:"transaction_id"`
}

// receive answers one callback: 401 unless its signature verifies, 400
// when the signed body is not a status of a request, 200 once a final
// status is on the payouts queue (or, not final, acknowledged). Only a 200
// has queued anything; the operator sends again what was not answered 200.
func receive(h *operatorhooks.Handler, w http.ResponseWriter, r *http.Request) error {
	body, err := httpapi.ReadBody(r)
	if err != nil {
		return err
	}
	// The Lambda adapter splits a header at its commas and trims the
	// spaces: join the values again as a signer writes a list (", "), as
	// the signature's components are read whole.
	header := http.Header{}
	for name, values := range r.Header {
		header.Set(name, strings.Join(values, ", "))
	}
	if header.Get("Host") == "" { // a signature may cover @authority
		header.Set("Host", r.Host)
	}
	cb, err := h.Accept(r.Context(), r.Method, r.URL.EscapedPath(), header, body)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Callback received", received{TransactionID: cb.Reference})
	return nil
}
