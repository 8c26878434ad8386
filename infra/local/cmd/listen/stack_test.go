package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"payments/infra/local/localtest"
	"payments/pkg/waittest"
)

// TestPayoutReachesListener serves the template's functions on a
// throwaway stack, as `make run` does, opens the listener for a company as
// `make listen COMPANY=<id>` does (the console sets the webhook URL and
// rotates the secret), makes a payout, and waits until the listener has
// printed the payout's status event, verified, under the event id the
// delivery log gives it.
func TestPayoutReachesListener(t *testing.T) {
	api := apiClient{t: t, base: localtest.Serve(t, nil) + "/api/v1"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	admin := map[string]string{"X-Admin-Key": localtest.AdminAPIKey}
	company, token := api.payingCompany()
	auth := map[string]string{"Authorization": "Bearer " + token}

	out := &syncBuffer{}
	s, err := open(ctx, config{company: company}, testCA, newConsole(api.base, localtest.AdminAPIKey), out)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.serve(ctx) }()
	defer func() { cancel(); <-served }()
	if !strings.Contains(out.String(), "ROTATED") || !strings.Contains(out.String(), "webhook_url set to "+s.url) {
		t.Fatalf("open did not say it rotated the secret and set the URL:\n%s", out.String())
	}
	var got struct {
		Data struct {
			WebhookURL string `json:"webhook_url"`
		} `json:"data"`
	}
	api.call("GET", "/admin/companies/"+company, admin, nil, http.StatusOK, &got)
	if got.Data.WebhookURL != s.url {
		t.Fatalf("webhook_url %q, want the listener's %q", got.Data.WebhookURL, s.url)
	}

	var payout struct {
		Data struct {
			TransactionID string `json:"transaction_id"`
		} `json:"data"`
	}
	api.call("POST", "/payment/payout", auth, map[string]any{"operator": "mtn", "country": "CM", "phone_number": "237670000001", "amount": 5000, "currency": "XAF"}, http.StatusOK, &payout)
	waittest.Until(t, 30*time.Second, "the listener prints the payout's first status event", func() bool {
		return strings.Contains(out.String(), `"transaction_id": "`+payout.Data.TransactionID+`"`)
	})
	var events struct {
		Data []struct {
			ID      string `json:"id"`
			Event   string `json:"event"`
			Payload struct {
				TransactionID string `json:"transaction_id"`
				Status        string `json:"status"`
			} `json:"payload"`
		} `json:"data"`
	}
	api.call("GET", "/webhooks/events?event=payment.payout.status_updated&limit=100", auth, nil, http.StatusOK, &events)
	var id string
	for _, e := range events.Data {
		if e.Payload.TransactionID == payout.Data.TransactionID && e.Payload.Status == "PENDING" {
			id = e.ID
		}
	}
	if id == "" {
		t.Fatalf("the delivery log has no PENDING event of payout %s: %+v", payout.Data.TransactionID, events.Data)
	}
	if want := " payment.payout.status_updated  event " + id + "  verified\n"; !strings.Contains(out.String(), want) {
		t.Errorf("the listener did not print %q:\n%s", want, out.String())
	}
	if strings.Contains(out.String(), "NOT verified") {
		t.Errorf("a delivery did not verify:\n%s", out.String())
	}
}

// TestOwnEndpointReachesListener opens the listener as `make listen
// TOKEN=… EVENTS=payment.payout.status_updated` does: it creates the
// company's own endpoint with its token, no console involved. The endpoint's
// secret is then rotated with an overlap: the payout's events still verify
// with the secret the listener holds. When the listener stops, the endpoint
// is gone.
func TestOwnEndpointReachesListener(t *testing.T) {
	api := apiClient{t: t, base: localtest.Serve(t, nil) + "/api/v1"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, token := api.payingCompany()
	auth := map[string]string{"Authorization": "Bearer " + token}

	out := &syncBuffer{}
	cfg := config{token: token, events: []string{"payment.payout.status_updated"}}
	s, err := open(ctx, cfg, testCA, newCompanyAPI(api.base, token), out)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.serve(ctx) }()
	var list struct {
		Data []struct {
			ID            string   `json:"id"`
			URL           string   `json:"url"`
			EnabledEvents []string `json:"enabled_events"`
		} `json:"data"`
	}
	api.call("GET", "/webhooks/endpoints", auth, nil, http.StatusOK, &list)
	if len(list.Data) != 1 || list.Data[0].URL != s.url || list.Data[0].ID != s.endpoint || fmt.Sprint(list.Data[0].EnabledEvents) != "[payment.payout.status_updated]" {
		t.Fatalf("endpoints %+v, want the listener's", list.Data)
	}
	api.call("POST", "/webhooks/endpoints/"+s.endpoint+"/rotate-secret", auth, map[string]int{"expire_previous_in_hours": 1}, http.StatusCreated, nil)

	var payout struct {
		Data struct {
			TransactionID string `json:"transaction_id"`
		} `json:"data"`
	}
	api.call("POST", "/payment/payout", auth, map[string]any{"operator": "mtn", "country": "CM", "phone_number": "237670000001", "amount": 5000, "currency": "XAF"}, http.StatusOK, &payout)
	waittest.Until(t, 30*time.Second, "the listener prints the payout's first status event", func() bool {
		return strings.Contains(out.String(), `"transaction_id": "`+payout.Data.TransactionID+`"`)
	})
	if !strings.Contains(out.String(), " payment.payout.status_updated  event ") || strings.Contains(out.String(), "NOT verified") {
		t.Errorf("a delivery did not verify with the secret before the rotation:\n%s", out.String())
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	api.call("GET", "/webhooks/endpoints", auth, nil, http.StatusOK, &list)
	if len(list.Data) != 0 || !strings.Contains(out.String(), "endpoint "+s.endpoint+" deleted") {
		t.Fatalf("after stop: endpoints %+v\n%s", list.Data, out.String())
	}
}

// payingCompany creates an approved company with an XAF wallet holding
// 100,000 to pay out, and returns its id and a token.
func (c apiClient) payingCompany() (id, token string) {
	c.t.Helper()
	admin := map[string]string{"X-Admin-Key": localtest.AdminAPIKey}
	var created struct {
		Data struct {
			ID        string `json:"id"`
			ClientID  string `json:"client_id"`
			ClientKey string `json:"client_key"`
		} `json:"data"`
	}
	c.call("POST", "/admin/companies", admin, map[string]string{"name": "Listener Test"}, http.StatusCreated, &created)
	company := created.Data
	c.call("PATCH", "/admin/companies/"+company.ID, admin, map[string]string{"kyb_status": "APPROVED"}, http.StatusOK, nil)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	c.call("POST", "/auth/token", nil, map[string]string{"client_id": company.ClientID, "client_key": company.ClientKey}, http.StatusOK, &tok)
	auth := map[string]string{"Authorization": "Bearer " + tok.AccessToken}
	var wallet struct {
		Data struct{ ID string } `json:"data"`
	}
	c.call("POST", "/wallets", auth, map[string]string{"currency": "XAF", "country": "Cameroon", "country_iso_code": "CM", "country_phone_code": "+237"}, http.StatusCreated, &wallet)
	c.call("POST", "/admin/wallets/"+wallet.Data.ID+"/credit", admin, map[string]any{"balance": "payout", "amount": 100000, "reference": "listener-test"}, http.StatusOK, nil)
	return company.ID, tok.AccessToken
}

// apiClient calls the dev server's API, failing t on an unexpected
// answer.
type apiClient struct {
	t    *testing.T
	base string
}

// call sends body as JSON with header, checks the status and decodes the
// answer into out when not nil.
func (c apiClient) call(method, path string, header map[string]string, body any, want int, out any) {
	c.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			c.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}
