package devserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"payments/infra/local/devserver"
	"payments/pkg/providers/issuer/stripeissuing/stripesim"
)

func TestStartIssuer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]string
		serves bool
	}{
		{"sandbox", map[string]string{}, false},
		{"real issuer", map[string]string{"Mode": "production", "IssuerBaseUrl": "https://api.stripe.com"}, false},
		{"production", map[string]string{"Mode": "production"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			events := make(chan string, 4)
			hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				ev, err := webhook.ConstructEvent(body, r.Header.Get("Stripe-Signature"), "whsec_local")
				if err != nil || r.URL.Path != "/api/v1/issuer/stripe/webhooks" {
					t.Errorf("event at %s: %v", r.URL.Path, err)
					w.WriteHeader(http.StatusBadRequest)
					return
				}
				events <- string(ev.Type)
			}))
			defer hooks.Close()
			res := devserver.Resources{Params: tc.params, Secrets: map[string]string{"ISSUER_API_KEY": "sk_local", "ISSUER_WEBHOOK_SECRET": "whsec_local"}}
			before := tc.params["IssuerBaseUrl"]
			is, err := devserver.StartIssuer(ctx, res, hooks.URL+"/api/v1", "", 0, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.serves {
				if is != nil || res.Params["IssuerBaseUrl"] != before {
					t.Errorf("served %v, IssuerBaseUrl %q; want nothing served", is, res.Params["IssuerBaseUrl"])
				}
				return
			}
			defer is.Close()
			if res.Params["IssuerBaseUrl"] != is.URL {
				t.Errorf("IssuerBaseUrl %q, want %q", res.Params["IssuerBaseUrl"], is.URL)
			}
			form := url.Values{"name": {"Ama Mensah"}, "billing[address][line1]": {"1 Main Street"}, "billing[address][city]": {"Accra"},
				"billing[address][postal_code]": {"00233"}, "billing[address][country]": {"GH"}}
			req, _ := http.NewRequest(http.MethodPost, is.URL+"/v1/issuing/cardholders", strings.NewReader(form.Encode()))
			req.Header.Set("Authorization", "Bearer sk_local")
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("create cardholder: status %d", resp.StatusCode)
			}
			select {
			case typ := <-events:
				if typ != "issuing_cardholder.created" {
					t.Errorf("event %s, want issuing_cardholder.created", typ)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no event delivered within 10 s")
			}
			if got := issuingBalance(t, is.URL); got != devserver.IssuingFloat {
				t.Errorf("Issuing balance %d cents, want the float, %d", got, devserver.IssuingFloat)
			}
		})
	}
}

// issuingBalance reads the Issuing balance available, USD cents, of the
// simulation at base (GET /v1/balance, as the reconciliation reads it).
func issuingBalance(t *testing.T, base string) int64 {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/balance", nil)
	req.Header.Set("Authorization", "Bearer sk_local")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b stripe.Balance
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/balance: status %d, %v", resp.StatusCode, err)
	}
	if b.Issuing == nil || len(b.Issuing.Available) != 1 || b.Issuing.Available[0].Currency != stripe.CurrencyUSD {
		t.Fatalf("GET /v1/balance: no Issuing balance in USD: %+v", b.Issuing)
	}
	return b.Issuing.Available[0].Amount
}

// TestStartIssuerSettings: the simulation's settings come from the
// environment, and one it cannot take stops the start, naming it.
func TestStartIssuerSettings(t *testing.T) {
	for _, tc := range []struct {
		name, standIn, drop string
		ok                  bool
	}{
		{"approve, dropping cardholders' creation", "approve", "issuing_cardholder.created", true},
		{"an unknown stand-in", "sometimes", "", false},
		{"an authorization request dropped", "", "issuing_authorization.request", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(stripesim.EnvStandIn, tc.standIn)
			t.Setenv(stripesim.EnvDropEvents, tc.drop)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			res := devserver.Resources{Params: map[string]string{"Mode": "production"}, Secrets: map[string]string{"ISSUER_API_KEY": "sk_local", "ISSUER_WEBHOOK_SECRET": "whsec_local"}}
			is, err := devserver.StartIssuer(ctx, res, "http://127.0.0.1:9/api/v1", "", 0, "", nil)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "SIM_STRIPE_") {
					t.Errorf("err = %v, naming no setting", err)
				}
				return
			}
			defer is.Close()
			form := url.Values{"name": {"Ama Mensah"}, "billing[address][line1]": {"1 Main Street"}, "billing[address][city]": {"Accra"},
				"billing[address][postal_code]": {"00233"}, "billing[address][country]": {"GH"}}
			req, _ := http.NewRequest(http.MethodPost, is.URL+"/v1/issuing/cardholders", strings.NewReader(form.Encode()))
			req.Header.Set("Authorization", "Bearer sk_local")
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if d := is.Sim.Dropped(); len(d) != 1 || !strings.HasPrefix(d[0], "issuing_cardholder.created ") {
				t.Errorf("dropped %q, want the cardholder's creation", d)
			}
		})
	}
}
