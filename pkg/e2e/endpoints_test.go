package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"payments/pkg/app/apptest"
	"payments/pkg/events"
	"payments/pkg/function/webhooksapi"
	"payments/pkg/outbound"
	"payments/pkg/webhooks"
)

// answer is an answer of the webhooks function.
type answer struct {
	status int
	raw    string
	Data   json.RawMessage `json:"data"`
	Field  string          `json:"field"`
	Code   string          `json:"code"`
}

// send calls the webhooks function with token and a JSON body.
func (e *hookEnv) send(t *testing.T, token, method, path, body string) answer {
	t.Helper()
	res := apptest.AuthTestCall(t, e.log, apptest.AuthTestEvent(method, "/api/v1"+path, "192.0.2.7", map[string]string{"authorization": "Bearer " + token}, body))
	a := answer{status: res.StatusCode, raw: res.Body}
	if err := json.Unmarshal([]byte(res.Body), &a); err != nil {
		t.Fatalf("%s %s: %q", method, path, res.Body)
	}
	return a
}

// apiEndpoint is an endpoint as the API answers it.
type apiEndpoint struct {
	ID                      string   `json:"id"`
	URL                     string   `json:"url"`
	EnabledEvents           []string `json:"enabled_events"`
	Status                  string   `json:"status"`
	Console                 bool     `json:"console"`
	Secret                  string   `json:"secret"`
	PreviousSecretExpiresAt *string  `json:"previous_secret_expires_at"`
}

func (a answer) endpoint(t *testing.T) apiEndpoint {
	t.Helper()
	var ep apiEndpoint
	if err := json.Unmarshal(a.Data, &ep); err != nil {
		t.Fatalf("data: %s", a.raw)
	}
	return ep
}

// createEndpoint creates an endpoint at url for kinds and returns it.
func (e *hookEnv) createEndpoint(t *testing.T, url string, kinds ...string) apiEndpoint {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"url": url, "enabled_events": kinds})
	a := e.send(t, e.token, "POST", "/webhooks/endpoints", string(body))
	ep := a.endpoint(t)
	if a.status != http.StatusCreated || !strings.HasPrefix(ep.Secret, webhooks.EndpointSecretPrefix) || ep.Status != "enabled" {
		t.Fatalf("create endpoint: %d %s", a.status, a.raw)
	}
	return ep
}

// emitCardFund commits and publishes a card.fund event.
func (e *hookEnv) emitCardFund(t *testing.T) events.Event {
	t.Helper()
	ev, err := events.Build(e.company, events.CardFundData{TransactionID: "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f61",
		CardID: "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f62", Amount: "25", Currency: "USD", FeeAmount: "0.5"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.Commit(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if err := e.publisher.Publish(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// newEndpointsEnv is a hookEnv whose webhooks function admits loopback
// endpoint URLs, as make run's does.
func newEndpointsEnv(t *testing.T, rcv *receiver) *hookEnv {
	t.Setenv(outbound.AllowLoopbackEnv, "true")
	e := newHookEnv(t, rcv.client())
	var err error
	if e.log, err = webhooksapi.New(context.Background(), apptest.Recording(e.Cfg, "webhooks")); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestWebhookEndpoints is the acceptance test of endpoints a company manages
// with its own token: two endpoints with different filters receive exactly
// their kinds, each signed with its own secret; a disabled and a deleted one
// receive nothing; a failing one does not hold up the others; the console's
// webhook_url is an endpoint too.
func TestWebhookEndpoints(t *testing.T) {
	rcv := newReceiver(t, map[string][]int{"/payouts": {200}, "/cards": {200}, "/off": {200}, "/gone": {200}, "/down": {503}, "/console": {200}})
	e := newEndpointsEnv(t, rcv)
	consoleSecret := e.setWebhook(t, rcv.URL+"/console", true)

	payouts := e.createEndpoint(t, rcv.URL+"/payouts", "payment.payout.status_updated")
	cards := e.createEndpoint(t, rcv.URL+"/cards", "card.fund", "card.withdraw")
	off := e.createEndpoint(t, rcv.URL+"/off", "*")
	gone := e.createEndpoint(t, rcv.URL+"/gone", "*")
	down := e.createEndpoint(t, rcv.URL+"/down", "*")
	if a := e.send(t, e.token, "PATCH", "/webhooks/endpoints/"+off.ID, `{"status":"disabled"}`); a.status != http.StatusOK || a.endpoint(t).Status != "disabled" {
		t.Fatalf("disable: %d %s", a.status, a.raw)
	}
	if a := e.send(t, e.token, "DELETE", "/webhooks/endpoints/"+gone.ID, ""); a.status != http.StatusOK {
		t.Fatalf("delete: %d %s", a.status, a.raw)
	}
	if a := e.send(t, e.token, "GET", "/webhooks/endpoints/"+gone.ID, ""); a.status != http.StatusNotFound || a.Code != "WEBHOOK_ENDPOINT_NOT_FOUND" {
		t.Fatalf("deleted endpoint: %d %s", a.status, a.raw)
	}

	// The list: the console's first (its id is the company's), then the
	// others oldest first, never a secret.
	a := e.send(t, e.token, "GET", "/webhooks/endpoints", "")
	var list []apiEndpoint
	if err := json.Unmarshal(a.Data, &list); err != nil || a.status != http.StatusOK {
		t.Fatalf("list: %d %s", a.status, a.raw)
	}
	var ids []string
	for _, ep := range list {
		ids = append(ids, ep.ID)
		if ep.Secret != "" {
			t.Fatalf("the list shows a secret: %s", a.raw)
		}
	}
	if want := []string{e.company, payouts.ID, cards.ID, off.ID, down.ID}; !slices.Equal(ids, want) || !list[0].Console || list[0].URL != rcv.URL+"/console" {
		t.Fatalf("list %v, want %v: %s", ids, want, a.raw)
	}

	// Another company sees none of them.
	_, clientID, clientKey := e.CreateCompany(t, "Other Co")
	other := e.MustToken(t, clientID, clientKey)
	for _, id := range []string{payouts.ID, e.company} {
		for _, m := range []string{"GET", "DELETE"} {
			if a := e.send(t, other, m, "/webhooks/endpoints/"+id, ""); a.status != http.StatusNotFound {
				t.Fatalf("another company's %s %s: %d %s", m, id, a.status, a.raw)
			}
		}
		if a := e.send(t, other, "POST", "/webhooks/endpoints/"+id+"/rotate-secret", ""); a.status != http.StatusNotFound {
			t.Fatalf("another company's rotation: %d %s", a.status, a.raw)
		}
	}

	e.poll(t)
	start := time.Now()
	payout := e.emit(t, "")
	card := e.emitCardFund(t)
	e.waitFor(t, payout.ID, 40*time.Second, "FAILED (the down endpoint)", func(le logEntry) bool { return le.Status == "FAILED" })
	e.waitFor(t, card.ID, 40*time.Second, "FAILED (the down endpoint)", func(le logEntry) bool { return le.Status == "FAILED" })

	type want struct {
		path   string
		secret string
		events []string
	}
	for _, w := range []want{
		{"/payouts", payouts.Secret, []string{payout.ID}},
		{"/cards", cards.Secret, []string{card.ID}},
		{"/console", consoleSecret, []string{payout.ID, card.ID}},
		{"/off", off.Secret, nil},
		{"/gone", gone.Secret, nil},
	} {
		var got []string
		for _, r := range rcv.requests(w.path) {
			got = append(got, r.header.Get(webhooks.EventIDHeader))
			header := r.header.Get(webhooks.SignatureHeader)
			if err := webhook.ValidatePayload(r.body, header, w.secret); err != nil {
				t.Errorf("%s: not signed with its endpoint's secret: %v", w.path, err)
			}
			if r.at.Sub(start) > 5*time.Second {
				t.Errorf("%s: delivered %s after the events, held up by the failing endpoint", w.path, r.at.Sub(start))
			}
		}
		slices.Sort(got)
		slices.Sort(w.events)
		if !slices.Equal(got, w.events) {
			t.Errorf("%s received %v, want %v", w.path, got, w.events)
		}
	}
	if n := len(rcv.requests("/down")); n != 2*webhooks.MaxAttempts {
		t.Errorf("the failing endpoint got %d attempts, want %d", n, 2*webhooks.MaxAttempts)
	}

	// The delivery log shows the event's sequence, and one delivery per
	// endpoint.
	le := e.entry(t, payout.ID)
	if stored, err := e.store.Event(context.Background(), e.company, payout.ID); err != nil || le.Sequence == nil || *le.Sequence != stored.Sequence || stored.Sequence < 1 {
		t.Fatalf("sequence %v in the log, %d stored (%v)", le.Sequence, stored.Sequence, err)
	}
	byEndpoint := map[string]string{}
	for _, d := range le.Deliveries {
		byEndpoint[d.URL] = d.Status
	}
	if fmt.Sprint(byEndpoint) != fmt.Sprint(map[string]string{rcv.URL + "/payouts": "DELIVERED", rcv.URL + "/console": "DELIVERED", rcv.URL + "/down": "FAILED"}) {
		t.Fatalf("deliveries %v", byEndpoint)
	}

	// A resend to one endpoint goes there only.
	before := len(rcv.requests("/console"))
	if a := e.send(t, e.token, "POST", "/webhooks/events/"+payout.ID+"/resend", fmt.Sprintf(`{"endpoint_id":%q}`, payouts.ID)); a.status != http.StatusAccepted {
		t.Fatalf("resend: %d %s", a.status, a.raw)
	}
	e.waitFor(t, payout.ID, 20*time.Second, "resent to one endpoint", func(le logEntry) bool { return len(rcv.requests("/payouts")) == 2 })
	if len(rcv.requests("/console")) != before {
		t.Fatal("a resend to one endpoint went to another")
	}
	// The console's endpoint, changed by the company: its filter, then
	// deleted, which clears webhook_url but keeps the company's signing
	// secret (it signs notify_url deliveries); set again by the console, it
	// takes every kind once more.
	if a := e.send(t, e.token, "PATCH", "/webhooks/endpoints/"+e.company, `{"enabled_events":["card.fund"],"description":"ops"}`); a.status != http.StatusOK || a.endpoint(t).EnabledEvents[0] != "card.fund" {
		t.Fatalf("patch the console's endpoint: %d %s", a.status, a.raw)
	}
	if a := e.send(t, e.token, "DELETE", "/webhooks/endpoints/"+e.company, ""); a.status != http.StatusOK {
		t.Fatalf("delete the console's endpoint: %d %s", a.status, a.raw)
	}
	if a := e.send(t, e.token, "GET", "/webhooks/endpoints/"+e.company, ""); a.status != http.StatusNotFound {
		t.Fatalf("the deleted console endpoint: %d %s", a.status, a.raw)
	}
	if eps, err := e.store.Endpoints(context.Background(), e.company); err != nil || len(eps) == 0 || !eps[0].Console || e.openSecret(t, eps[0]) != consoleSecret || eps[0].URL != "" {
		t.Fatalf("after deleting the console's endpoint: %+v, %v", eps, err)
	}
	e.setWebhook(t, rcv.URL+"/console", false)
	if a := e.send(t, e.token, "GET", "/webhooks/endpoints/"+e.company, ""); a.status != http.StatusOK || fmt.Sprint(a.endpoint(t).EnabledEvents) != "[*]" {
		t.Fatalf("the console's endpoint set again: %d %s", a.status, a.raw)
	}

	for _, tt := range []struct{ body, field string }{
		{fmt.Sprintf(`{"endpoint_id":%q}`, cards.ID), "endpoint_id"}, // does not take payouts
		{fmt.Sprintf(`{"endpoint_id":%q}`, off.ID), "endpoint_id"},   // disabled
		{fmt.Sprintf(`{"endpoint_id":%q}`, gone.ID), "endpoint_id"},  // deleted
		{`{"endpoint":"x"}`, "endpoint"},
	} {
		if a := e.send(t, e.token, "POST", "/webhooks/events/"+payout.ID+"/resend", tt.body); a.status != http.StatusBadRequest || a.Field != tt.field {
			t.Errorf("resend %s: %d %s", tt.body, a.status, a.raw)
		}
	}
}

// TestWebhookEndpointRotation: during the overlap a delivery verifies with
// the old and with the new secret (ours and stripe-go's verifier), after it
// only with the new; 0 drops the old one at once.
func TestWebhookEndpointRotation(t *testing.T) {
	rcv := newReceiver(t, map[string][]int{"/in": {200}})
	e := newEndpointsEnv(t, rcv)
	ep := e.createEndpoint(t, rcv.URL+"/in", "*")
	e.poll(t)

	deliver := func(t *testing.T) received {
		t.Helper()
		n := len(rcv.requests("/in"))
		ev := e.emit(t, "")
		e.waitFor(t, ev.ID, 20*time.Second, "DELIVERED", func(le logEntry) bool { return le.Status == "DELIVERED" })
		got := rcv.requests("/in")
		if len(got) != n+1 {
			t.Fatalf("%d deliveries, want %d", len(got), n+1)
		}
		return got[n]
	}
	verifies := func(r received, secret string) bool {
		header := r.header.Get(webhooks.SignatureHeader)
		ours := webhooks.Verify(header, r.body, secret, 0, time.Time{}) == nil
		stripes := webhook.ValidatePayloadIgnoringTolerance(r.body, header, secret) == nil
		if ours != stripes {
			t.Fatalf("our verifier says %v, stripe-go's %v", ours, stripes)
		}
		return ours
	}

	a := e.send(t, e.token, "POST", "/webhooks/endpoints/"+ep.ID+"/rotate-secret", `{"expire_previous_in_hours":2}`)
	rotated := a.endpoint(t)
	if a.status != http.StatusCreated || rotated.Secret == ep.Secret || !strings.HasPrefix(rotated.Secret, webhooks.EndpointSecretPrefix) || rotated.PreviousSecretExpiresAt == nil {
		t.Fatalf("rotate: %d %s", a.status, a.raw)
	}
	if a := e.send(t, e.token, "GET", "/webhooks/endpoints/"+ep.ID, ""); a.endpoint(t).Secret != "" {
		t.Fatalf("GET shows the secret: %s", a.raw)
	}
	r := deliver(t)
	if !verifies(r, rotated.Secret) || !verifies(r, ep.Secret) {
		t.Fatalf("during the overlap: %s", r.header.Get(webhooks.SignatureHeader))
	}
	// One header, the new secret's v1 first.
	h := r.header.Get(webhooks.SignatureHeader)
	ts, _, _ := strings.Cut(strings.TrimPrefix(h, "t="), ",")
	sec, _ := strconv.ParseInt(ts, 10, 64)
	if strings.Count(h, "v1=") != 2 || !strings.HasPrefix(h, webhooks.Sign(rotated.Secret, time.Unix(sec, 0), r.body)+",v1=") {
		t.Fatalf("header %s", h)
	}

	e.clock.Advance(2*time.Hour + time.Minute)
	r = deliver(t)
	if !verifies(r, rotated.Secret) || verifies(r, ep.Secret) {
		t.Fatalf("after the overlap: %s", r.header.Get(webhooks.SignatureHeader))
	}

	a = e.send(t, e.token, "POST", "/webhooks/endpoints/"+ep.ID+"/rotate-secret", `{"expire_previous_in_hours":0}`)
	third := a.endpoint(t)
	if a.status != http.StatusCreated || third.PreviousSecretExpiresAt != nil {
		t.Fatalf("rotate with 0: %d %s", a.status, a.raw)
	}
	r = deliver(t)
	if !verifies(r, third.Secret) || verifies(r, rotated.Secret) {
		t.Fatalf("after a rotation with 0: %s", r.header.Get(webhooks.SignatureHeader))
	}
	for _, body := range []string{`{"expire_previous_in_hours":169}`, `{"expire_previous_in_hours":-1}`, `{"expire_previous_in_hours":1.5}`, `{"expire_previous_in_hours":"x"}`} {
		if a := e.send(t, e.token, "POST", "/webhooks/endpoints/"+ep.ID+"/rotate-secret", body); a.status != http.StatusBadRequest || a.Field != "expire_previous_in_hours" {
			t.Errorf("rotate %s: %d %s", body, a.status, a.raw)
		}
	}
}

// TestWebhookEndpointInput: every bad input is a 400 naming its field, and
// the 17th endpoint is refused with a stable code.
func TestWebhookEndpointInput(t *testing.T) {
	rcv := newReceiver(t, nil)
	e := newEndpointsEnv(t, rcv)
	for _, tt := range []struct{ body, field string }{
		{`{"enabled_events":["*"]}`, "url"},
		{`{"url":"http://hooks.example.com/x","enabled_events":["*"]}`, "url"},
		{`{"url":"https://10.0.0.7/x","enabled_events":["*"]}`, "url"},
		{`{"url":"https://169.254.169.254/latest","enabled_events":["*"]}`, "url"},
		{`{"url":"https://user:pw@hooks.example.com/x","enabled_events":["*"]}`, "url"},
		{`{"url":"https://hooks.example.com/x"}`, "enabled_events"},
		{`{"url":"https://hooks.example.com/x","enabled_events":[]}`, "enabled_events"},
		{`{"url":"https://hooks.example.com/x","enabled_events":["card.nope"]}`, "enabled_events"},
		{`{"url":"https://hooks.example.com/x","enabled_events":["*","card.fund"]}`, "enabled_events"},
		{`{"url":"https://hooks.example.com/x","enabled_events":["*"],"status":"disabled"}`, "status"},
		{`{"url":"https://hooks.example.com/x","enabled_events":["*"],"colour":"red"}`, "colour"},
		{`{"url":"https://hooks.example.com/x","enabled_events":["*"],"description":"` + strings.Repeat("d", 501) + `"}`, "description"},
	} {
		if a := e.send(t, e.token, "POST", "/webhooks/endpoints", tt.body); a.status != http.StatusBadRequest || a.Field != tt.field {
			t.Errorf("create %.80s: %d %s", tt.body, a.status, a.raw)
		}
	}
	ep := e.createEndpoint(t, "https://hooks.example.com/x", "card.fund", "card.fund")
	if !slices.Equal(ep.EnabledEvents, []string{"card.fund"}) {
		t.Fatalf("enabled_events %v", ep.EnabledEvents)
	}
	for _, tt := range []struct{ body, field string }{
		{`{}`, "body"},
		{`{"status":"paused"}`, "status"},
		{`{"url":"ftp://x"}`, "url"},
		{`{"enabled_events":["nope"]}`, "enabled_events"},
	} {
		if a := e.send(t, e.token, "PATCH", "/webhooks/endpoints/"+ep.ID, tt.body); a.status != http.StatusBadRequest || a.Field != tt.field {
			t.Errorf("patch %s: %d %s", tt.body, a.status, a.raw)
		}
	}
	if a := e.send(t, e.token, "PATCH", "/webhooks/endpoints/not-a-uuid", `{"status":"disabled"}`); a.status != http.StatusNotFound {
		t.Errorf("patch of a bad id: %d %s", a.status, a.raw)
	}
	for range webhooks.MaxEndpoints - 1 {
		e.createEndpoint(t, "https://hooks.example.com/y", "customer.created")
	}
	if a := e.send(t, e.token, "POST", "/webhooks/endpoints", `{"url":"https://hooks.example.com/z","enabled_events":["*"]}`); a.status != http.StatusBadRequest || a.Code != "TOO_MANY_WEBHOOK_ENDPOINTS" {
		t.Fatalf("endpoint %d: %d %s", webhooks.MaxEndpoints+1, a.status, a.raw)
	}
	if a := e.send(t, e.token, "DELETE", "/webhooks/endpoints/"+ep.ID, ""); a.status != http.StatusOK {
		t.Fatalf("delete: %d %s", a.status, a.raw)
	}
	e.createEndpoint(t, "https://hooks.example.com/z", "*")
}
