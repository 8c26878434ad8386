package app

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"payments/infra/local/samtemplate"
)

// TestTemplateRoutesReachHandlers sends a request for every route of
// template.yaml to the handler of the function the template wires it to, and
// checks that the function's router knows the route: an unknown route
// answers NOT_FOUND or METHOD_NOT_ALLOWED, which a registered one never does
// (it answers the guard's 401, a validation 400 or its own 404 code).
func TestTemplateRoutesReachHandlers(t *testing.T) {
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := newAuthTestEnv(t)
	for _, fn := range tpl.Functions() {
		if len(fn.Routes) == 0 {
			continue
		}
		newHandler, ok := HTTPFunctions[fn.Dir]
		if !ok {
			t.Errorf("%s: functions/%s has no constructor in HTTPFunctions", fn.LogicalID, fn.Dir)
			continue
		}
		h, err := newHandler(context.Background(), recording(env.cfg, fn.Dir))
		if err != nil {
			t.Fatalf("%s: %v", fn.LogicalID, err)
		}
		for _, r := range fn.Routes {
			t.Run(r.Method+" "+r.Path, func(t *testing.T) {
				path := r.Path
				for strings.Contains(path, "{") {
					i, j := strings.Index(path, "{"), strings.Index(path, "}")
					path = path[:i] + uuid.NewString() + path[j+1:]
				}
				res := authTestCall(t, h, authTestEvent(r.Method, path, "10.9.9.9", nil, "{}"))
				var body struct{ Code string }
				json.Unmarshal([]byte(res.Body), &body)
				if body.Code == "NOT_FOUND" || body.Code == "METHOD_NOT_ALLOWED" {
					t.Fatalf("function %s does not serve it: %d %s", fn.Dir, res.StatusCode, res.Body)
				}
			})
		}
	}
}

// TestSpecRoutesAreWired lists the spec's routes built so far and checks
// each is wired to exactly one function of the template.
func TestSpecRoutesAreWired(t *testing.T) {
	want := map[string]string{
		"POST /api/v1/auth/token":                                 "auth",
		"POST /api/v1/wallets":                                    "wallets",
		"GET /api/v1/wallets":                                     "wallets",
		"GET /api/v1/partner/wallets":                             "wallets",
		"GET /api/v1/wallet/usd-balance":                          "wallets",
		"GET /api/v1/wallet/transactions":                         "wallets",
		"GET /api/v1/wallet/transactions/{id}":                    "wallets",
		"GET /api/v1/wallet/transactions/wallet/{walletId}":       "wallets",
		"GET /api/v1/payment/balance":                             "payments",
		"POST /api/v1/payment/payout":                             "payments",
		"POST /api/v1/payment/collect":                            "payments",
		"GET /api/v1/payment/transactions":                        "payments",
		"GET /api/v1/payment/transactions/{transactionId}/status": "payments",
		"GET /api/v1/payment/guideline":                           "payments",
		"POST /api/v1/wallets/calculate-transfer-fees":            "wallets",
		"GET /api/v1/admin/companies/{id}/fees":                   "admin",
		"PUT /api/v1/admin/companies/{id}/fees":                   "admin",
		"POST /api/v1/admin/companies":                            "admin",
		"GET /api/v1/admin/companies/{id}":                        "admin",
		"PATCH /api/v1/admin/companies/{id}":                      "admin",
		"POST /api/v1/admin/companies/{id}/client-key":            "admin",
		"POST /api/v1/admin/wallets/{walletId}/credit":            "admin",
		"POST /api/v1/admin/companies/{id}/webhook-secret":        "admin",
		"DELETE /api/v1/admin/companies/{id}/webhook-secret":      "admin",
		"GET /api/v1/webhooks/events":                             "webhooks",
		"GET /api/v1/webhooks/events/{id}":                        "webhooks",
		"POST /api/v1/webhooks/events/{id}/resend":                "webhooks",
	}
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, fn := range tpl.Functions() {
		for _, r := range fn.Routes {
			got[r.Method+" "+r.Path] = append(got[r.Method+" "+r.Path], fn.Dir)
		}
	}
	for route, fn := range want {
		if fns := got[route]; len(fns) != 1 || fns[0] != fn {
			t.Errorf("%s wired to %v, want [%s]", route, fns, fn)
		}
	}
}
