package e2e_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"payments/pkg/apidoc/apitest"
	"payments/pkg/app/apptest"
	"payments/pkg/function"
)

// signedBodies are the routes whose JSON body a provider signs (the card
// issuer, Stripe, the operator): each is read by the provider's protocol
// once its signature verifies, not by httpapi.Decode, and a signed body
// without the identifiers it must carry (null has none) is a 400 naming
// body (their tests).
var signedBodies = []string{
	"POST /issuer/authorizations",
	"POST /issuer/stripe/webhooks",
	"POST /issuer/webhooks",
	"POST /operator/callbacks/pawapay",
}

// TestNullBodyIs400: every route whose body is a JSON object answers null,
// which encoding/json decodes into an object without a word, with the 400
// of any other body that is not an object (naming body), and does nothing;
// a route whose body is optional still takes an empty body as no options.
// The table must hold every route the document gives a JSON body.
func TestNullBodyIs400(t *testing.T) {
	e := newInputEnv(t)
	company := "/admin/companies/" + e.companyID
	id := "0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d"
	endpoint := e.endpoint(t)
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	e.mustDecode(t, e.mustCall(t, e.webhooks, "GET", "/webhooks/events?limit=1", "", 200), &list)
	if len(list.Data) == 0 {
		t.Fatal("the set-up's payout has no event")
	}
	event := list.Data[0].ID

	tests := []struct {
		route  string // as the document names it
		h      function.HTTPHandler
		target string
		// empty is the status of an empty body on a route whose body is
		// optional; 0 when the body is required.
		empty int
	}{
		{"POST /auth/token", e.auth, "/auth/token", 0},
		{"POST /admin/companies", e.admin, "/admin/companies", 0},
		{"PATCH /admin/companies/{id}", e.admin, company, 0},
		{"PUT /admin/companies/{id}/fees", e.admin, company + "/fees", 0},
		{"PUT /admin/companies/{id}/exchange-rates", e.admin, company + "/exchange-rates", 0},
		{"POST /admin/companies/{id}/owner", e.admin, company + "/owner", 0},
		{"POST /admin/wallets/{walletId}/credit", e.admin, "/admin/wallets/" + e.walletID + "/credit", 0},
		{"POST /admin/payments/{transactionId}/resolve", e.admin, "/admin/payments/" + e.paymentID + "/resolve", 0},
		{"POST /admin/customers/{id}/kyc", e.admin, "/admin/customers/" + id + "/kyc", 0},
		{"POST /admin/reconciliations", e.admin, "/admin/reconciliations", http.StatusCreated},
		{"POST /wallets", e.wallets, "/wallets", 0},
		{"POST /wallets/calculate-transfer-fees", e.wallets, "/wallets/calculate-transfer-fees", 0},
		{"POST /wallets/{id}/transfer-internal", e.wallets, "/wallets/" + e.walletID + "/transfer-internal", 0},
		{"POST /wallets/fund", e.wallets, "/wallets/fund", 0},
		{"POST /wallets/deposit", e.wallets, "/wallets/deposit", 0},
		{"POST /company/exchange-rates/convert", e.wallets, "/company/exchange-rates/convert", 0},
		{"POST /partner/wallets/xaf-usd-conversion", e.wallets, "/partner/wallets/xaf-usd-conversion", 0},
		{"POST /partner/wallets/preview-conversion", e.wallets, "/partner/wallets/preview-conversion", 0},
		{"POST /payment/payout", e.payments, "/payment/payout", 0},
		{"POST /payment/collect", e.payments, "/payment/collect", 0},
		{"POST /payment/payouts/bulk", e.payments, "/payment/payouts/bulk", 0},
		{"POST /customers/enroll", e.customers, "/customers/enroll", 0},
		{"POST /cards", e.cards, "/cards", 0},
		{"POST /cards/{id}/fund", e.cards, "/cards/" + id + "/fund", 0},
		{"POST /cards/{id}/withdraw", e.cards, "/cards/" + id + "/withdraw", 0},
		{"POST /cards/{id}/reveal-sessions", e.cards, "/cards/" + id + "/reveal-sessions", 0},
		{"POST /cards/{id}/terminate", e.cards, "/cards/" + id + "/terminate", http.StatusNotFound},
		{"POST /cards/transactions/{id}/disputes", e.cards, "/cards/transactions/" + id + "/disputes", 0},
		{"POST /sandbox/cards/{id}/authorizations", e.network, "/sandbox/cards/" + id + "/authorizations", 0},
		{"POST /sandbox/cards/{id}/terminate", e.network, "/sandbox/cards/" + id + "/terminate", http.StatusNotFound},
		{"POST /sandbox/card-transactions/{transactionId}/settle", e.network, "/sandbox/card-transactions/" + id + "/settle", http.StatusNotFound},
		{"POST /sandbox/card-transactions/{transactionId}/reverse", e.network, "/sandbox/card-transactions/" + id + "/reverse", http.StatusNotFound},
		{"POST /sandbox/card-transactions/{transactionId}/refund", e.network, "/sandbox/card-transactions/" + id + "/refund", http.StatusNotFound},
		{"POST /sandbox/card-transactions/{transactionId}/expire", e.network, "/sandbox/card-transactions/" + id + "/expire", http.StatusNotFound},
		{"POST /sandbox/cards/{id}/captures", e.network, "/sandbox/cards/" + id + "/captures", 0},
		{"POST /sandbox/cards/{id}/refunds", e.network, "/sandbox/cards/" + id + "/refunds", 0},
		{"POST /webhooks/endpoints", e.webhooks, "/webhooks/endpoints", 0},
		{"PATCH /webhooks/endpoints/{id}", e.webhooks, "/webhooks/endpoints/" + endpoint, 0},
		{"POST /webhooks/endpoints/{id}/rotate-secret", e.webhooks, "/webhooks/endpoints/" + endpoint + "/rotate-secret", http.StatusCreated},
		{"POST /webhooks/events/{id}/resend", e.webhooks, "/webhooks/events/" + event + "/resend", http.StatusAccepted},
	}

	t.Run("every JSON body is here", func(t *testing.T) {
		var want, got []string
		for path, item := range apitest.Default(t).Doc.Paths.Map() {
			for method, op := range item.Operations() {
				route := method + " " + path
				if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil || slices.Contains(signedBodies, route) {
					continue
				}
				want = append(want, route)
			}
		}
		for _, tt := range tests {
			got = append(got, tt.route)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("the routes with a JSON body are\n%v\nthe table holds\n%v", want, got)
		}
	})

	// What a null must not change: the company, the endpoint's secret and
	// the event's deliveries as they are before.
	reads := func() []string {
		return []string{
			e.mustCall(t, e.admin, "GET", company, "", 200),
			e.mustCall(t, e.webhooks, "GET", "/webhooks/endpoints/"+endpoint, "", 200),
			e.mustCall(t, e.webhooks, "GET", "/webhooks/events/"+event, "", 200),
		}
	}
	unchanged := reads()

	for _, tt := range tests {
		for _, body := range []string{"null", " \n\tnull \n", "[]", `"{}"`, "0", "true"} {
			t.Run(tt.route+" "+strings.TrimSpace(body), func(t *testing.T) {
				method, _, _ := strings.Cut(tt.route, " ")
				res := check(t, tt.h, e.event(method, tt.target, body))
				b := apptest.DecodeErrorBody(t, res.Body)
				if res.StatusCode != http.StatusBadRequest || b.Field != "body" || b.Message != "body: must be a JSON object" {
					t.Fatalf("%d %s, want a 400 naming body", res.StatusCode, res.Body)
				}
			})
		}
	}
	t.Run("nothing changed", func(t *testing.T) {
		for i, now := range reads() {
			if now != unchanged[i] {
				t.Errorf("read %d changed:\n%s\nwas\n%s", i, now, unchanged[i])
			}
		}
	})
	for _, tt := range tests {
		if tt.empty == 0 {
			continue
		}
		t.Run(tt.route+" empty", func(t *testing.T) {
			method, _, _ := strings.Cut(tt.route, " ")
			res := check(t, tt.h, e.event(method, tt.target, ""))
			if res.StatusCode != tt.empty {
				t.Fatalf("%d %s, want %d: an empty body is no options", res.StatusCode, res.Body, tt.empty)
			}
		})
	}
}
