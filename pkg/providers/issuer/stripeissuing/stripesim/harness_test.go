package stripesim_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"
	"github.com/stripe/stripe-go/v85/webhook"

	"payments/pkg/providers/issuer/stripeissuing/stripesim"
)

const (
	apiKey        = "sk_test_stripesim_test"
	webhookSecret = "whsec_stripesim_test"
)

// Requested amounts on which the receiver does not approve an
// authorization request.
const (
	amountDecline   = 6601 // it declines
	amountLate      = 6602 // it answers after the decision timeout
	amountNoVersion = 6603 // it approves without the Stripe-Version header
)

// receiver is a webhook endpoint that verifies every event as the adapter
// does (webhook.ConstructEvent) and answers issuing_authorization.request
// by the amount asked: approve with metadata, unless one of the amounts
// above.
type receiver struct {
	t        *testing.T
	mu       sync.Mutex
	requests []stripe.Event // issuing_authorization.request, in arrival order
	events   []stripe.Event // every other event, in arrival order
	seen     int            // events the harness's delivered returned
	failNext int            // answer 500 to as many other events
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	ev, err := webhook.ConstructEvent(body, r.Header.Get("Stripe-Signature"), webhookSecret)
	if err != nil {
		rc.t.Errorf("webhook.ConstructEvent: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	if ev.Type != "issuing_authorization.request" {
		defer rc.mu.Unlock()
		if rc.failNext > 0 {
			rc.failNext--
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		rc.events = append(rc.events, ev)
		return
	}
	rc.requests = append(rc.requests, ev)
	rc.mu.Unlock()
	if got := r.Header.Get("Accept"); got != "application/json" {
		rc.t.Errorf("issuing_authorization.request: Accept %q, want application/json", got)
	}
	var a stripe.IssuingAuthorization
	if err := json.Unmarshal(ev.Data.Raw, &a); err != nil || a.PendingRequest == nil {
		rc.t.Errorf("issuing_authorization.request: %v, pending_request %v", err, a.PendingRequest)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	answer := map[string]any{"approved": true, "metadata": map[string]string{"decided_by": "receiver"}}
	switch a.PendingRequest.Amount {
	case amountDecline:
		answer["approved"] = false
	case amountLate:
		<-r.Context().Done() // the simulation gave up
		return
	case amountNoVersion:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer)
		return
	}
	w.Header().Set("Stripe-Version", stripe.APIVersion)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
}

// received returns the types of the events received but requests.
func (rc *receiver) received() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var types []string
	for _, e := range rc.events {
		types = append(types, string(e.Type))
	}
	return types
}

// got returns the requests and the other events received.
func (rc *receiver) got() (requests, events []stripe.Event) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.requests), slices.Clone(rc.events)
}

// harness is a simulation served over HTTP, stripe-go's client of it and
// the webhook receiver of its events.
type harness struct {
	sim *stripesim.Sim
	url string
	sc  *stripe.Client
	rc  *receiver
}

// newHarness starts a simulation checked by the stack's stripe-mock.
func newHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, nil)
}

// newHarnessWith is newHarness with the configuration edit changes.
func newHarnessWith(t *testing.T, edit func(*stripesim.Config)) *harness {
	t.Helper()
	if testing.Short() {
		t.Skip("needs stripe-mock: make test")
	}
	mock := os.Getenv("STRIPE_MOCK_URL")
	if mock == "" {
		t.Fatal("STRIPE_MOCK_URL is not set: run this test through `make test` or `.cache/bin/devstack exec -- go test …`, which start stripe-mock")
	}
	rc := &receiver{t: t}
	hooks := httptest.NewServer(rc)
	t.Cleanup(hooks.Close)
	cfg := stripesim.Config{
		APIKey: apiKey, WebhookSecret: webhookSecret, WebhookURL: hooks.URL,
		StripeMockURL: mock, DecisionTimeout: time.Second,
	}
	if edit != nil {
		edit(&cfg)
	}
	sim, err := stripesim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	sc := stripe.NewClient(apiKey, stripe.WithBackends(stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL: stripe.String(srv.URL), MaxNetworkRetries: stripe.Int64(0),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})))
	t.Cleanup(func() {
		if v := sim.Violations(); len(v) > 0 && !t.Failed() && !slices.Contains(allowViolations, t.Name()) {
			t.Errorf("violations: %q", v)
		}
	})
	return &harness{sim: sim, url: srv.URL, sc: sc, rc: rc}
}

// allowViolations names the tests that cause violations on purpose.
var allowViolations = []string{"TestAuthorizationDecisions/no_Stripe-Version", "TestStripeMockRefuses", "TestStandInApproves/no_Stripe-Version"}

// card creates a cardholder and an active card with metadata.
func (h *harness) card(t *testing.T) *stripe.IssuingCard {
	t.Helper()
	ctx := context.Background()
	ch, err := h.sc.V1IssuingCardholders.Create(ctx, &stripe.IssuingCardholderCreateParams{
		Name: stripe.String("Ama Mensah"), Email: stripe.String("ama@example.com"), Type: stripe.String("individual"),
		Billing: &stripe.IssuingCardholderCreateBillingParams{Address: &stripe.AddressParams{
			Line1: stripe.String("1 Main Street"), City: stripe.String("San Francisco"), State: stripe.String("CA"),
			PostalCode: stripe.String("94111"), Country: stripe.String("US"),
		}},
		Metadata: map[string]string{"reference": "holder-1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := h.sc.V1IssuingCards.Create(ctx, &stripe.IssuingCardCreateParams{
		Cardholder: stripe.String(ch.ID), Type: stripe.String("virtual"), Currency: stripe.String("usd"),
		Status: stripe.String("active"), Metadata: map[string]string{"reference": "card-1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// authorize drives a purchase of amount on card.
func (h *harness) authorize(t *testing.T, card string, amount int64) *stripe.IssuingAuthorization {
	t.Helper()
	a, err := h.sc.V1TestHelpersIssuingAuthorizations.Create(context.Background(), &stripe.TestHelpersIssuingAuthorizationCreateParams{
		Card: stripe.String(card), Amount: stripe.Int64(amount), Currency: stripe.String("usd"),
		MerchantData: &stripe.TestHelpersIssuingAuthorizationCreateMerchantDataParams{
			Name: stripe.String("Corner Shop"), Category: stripe.String("computer_software_stores"), Country: stripe.String("US"),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// capture captures amount of authorization id (all it holds: 0), closing
// it unless keepOpen.
func (h *harness) capture(t *testing.T, id string, amount int64, keepOpen bool) *stripe.IssuingAuthorization {
	t.Helper()
	p := &stripe.TestHelpersIssuingAuthorizationCaptureParams{}
	if amount > 0 {
		p.CaptureAmount = stripe.Int64(amount)
	}
	if keepOpen {
		p.CloseAuthorization = stripe.Bool(false)
	}
	a, err := h.sc.V1TestHelpersIssuingAuthorizations.Capture(context.Background(), id, p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// balance reads the Issuing balance available.
func (h *harness) balance(t *testing.T) int64 {
	t.Helper()
	b, err := h.sc.V1Balance.Retrieve(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if b.Issuing == nil || len(b.Issuing.Available) != 1 || b.Issuing.Available[0].Currency != "usd" {
		t.Fatalf("balance %+v: no Issuing balance in usd", b)
	}
	return b.Issuing.Available[0].Amount
}

// delivered delivers the pending events and returns those the receiver got
// since the last call, types and all.
func (h *harness) delivered(t *testing.T) []stripe.Event {
	t.Helper()
	h.deliver(t)
	h.rc.mu.Lock()
	defer h.rc.mu.Unlock()
	got := h.rc.events[h.rc.seen:]
	h.rc.seen = len(h.rc.events)
	return slices.Clone(got)
}

// types is the events' types.
func types(events []stripe.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, string(e.Type))
	}
	return out
}

// deliver delivers the pending events, which must all be accepted.
func (h *harness) deliver(t *testing.T) {
	t.Helper()
	if err := h.sim.Deliver(context.Background()); err != nil {
		t.Fatal(err)
	}
}
