package apptest

import (
	"net/http/httptest"
	"os"
	"testing"

	"payments/infra/local/stack"
	"payments/pkg/providers/issuer/stripeissuing/stripesim"
)

// StripeTestKey is the secret key of the test deployments' simulated
// Stripe Issuing.
const StripeTestKey = "sk_test_apptest_issuer_key"

// NewStripeSim serves simulated Stripe Issuing over HTTP on this machine,
// every request checked by the stack's stripe-mock (STRIPE_MOCK_URL), its
// events signed with IssuerTestSecret and sent to webhookURL ("" sends
// none), and returns it and its base URL. The test fails if it saw a
// request or an answer off Stripe's API. In a -short run (make test-unit,
// no stripe-mock) nothing checks the requests against Stripe's API.
func NewStripeSim(t *testing.T, webhookURL string) (*stripesim.Sim, string) {
	t.Helper()
	mock := os.Getenv(stack.StripeMockEnv)
	if testing.Short() {
		mock = ""
	} else if mock == "" {
		t.Fatalf("%s is not set: run the tests through `make test` or `.cache/bin/devstack exec -- go test …`, which start stripe-mock", stack.StripeMockEnv)
	}
	sim, err := stripesim.New(stripesim.Config{
		APIKey: StripeTestKey, WebhookSecret: string(IssuerTestSecret), WebhookURL: webhookURL, StripeMockURL: mock,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		if v := sim.Violations(); len(v) > 0 {
			t.Errorf("requests and answers off Stripe's API: %v", v)
		}
	})
	return sim, srv.URL
}
