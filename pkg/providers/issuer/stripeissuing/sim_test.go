package stripeissuing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	stripe "github.com/stripe/stripe-go/v85"

	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/stripeissuing"
	"payments/pkg/providers/issuer/stripeissuing/stripesim"
)

const (
	simKey    = "sk_test_stripeissuing_sim"
	simSecret = "whsec_stripeissuing_sim_0123456789"
	// lateAmount is a requested amount our endpoint answers too late.
	lateAmount = 6602
)

// endpoint is our side of Stripe's events, as the stripe-webhooks function
// is: each event read by ParseEvent, a request answered (approved, or too
// late for lateAmount), a notification completed at Stripe through the
// adapter (its card, a dispute as it is now) and kept.
type endpoint struct {
	t  *testing.T
	c  *stripeissuing.Client
	mu sync.Mutex
	// got are the notifications, in the order of the events.
	got []issuer.Notification
}

func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var raw struct {
		Type string `json:"type"`
		Data struct {
			Object stripe.IssuingAuthorization `json:"object"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &raw)
	if p := raw.Data.Object.PendingRequest; raw.Type == stripeissuing.EventAuthorizationRequest && p != nil && p.Amount == lateAmount {
		<-r.Context().Done() // Stripe gave up
		return
	}
	ev, err := stripeissuing.ParseEvent(body, r.Header.Get(stripeissuing.SignatureHeader), []string{simSecret})
	if err != nil {
		e.t.Errorf("ParseEvent: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	answer := ev.Answer
	switch {
	case ev.Request != nil:
		a := stripeissuing.NewAnswer(issuer.AuthorizationAnswer{Decision: issuer.Approved})
		answer = &a
	case ev.Notification != nil:
		n := ev.Notification
		switch {
		case n.Type == issuer.NotifyDispute:
			err = e.c.CompleteDispute(r.Context(), n)
		case n.Reference == "":
			n.Reference, err = e.c.CardReference(r.Context(), n.CardID)
		}
		if err != nil {
			e.t.Errorf("%s %s: %v", ev.Type, ev.ID, err)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		b, err := ev.Body()
		if err != nil {
			e.t.Errorf("%s %s: %v", ev.Type, ev.ID, err)
		}
		parsed, err := issuer.ParseNotification(b)
		if err != nil {
			e.t.Errorf("%s %s: the card-worker cannot read %s: %v", ev.Type, ev.ID, b, err)
		}
		e.mu.Lock()
		e.got = append(e.got, parsed)
		e.mu.Unlock()
	}
	if answer != nil {
		w.Header().Set("Stripe-Version", stripeissuing.APIVersion)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer)
	}
}

// take returns the notifications since the last call.
func (e *endpoint) take() []issuer.Notification {
	e.mu.Lock()
	defer e.mu.Unlock()
	got := e.got
	e.got = nil
	return got
}

// simulated is simulated Stripe Issuing checked by stripe-mock, the
// adapter against it, our endpoint of its events, and stripe-go's client
// of its test helpers.
type simulated struct {
	sim *stripesim.Sim
	c   *stripeissuing.Client
	sc  *stripe.Client
	ep  *endpoint
}

// newSimulated starts a simulated Stripe Issuing whose configuration edit
// changes (nil: none).
func newSimulated(t *testing.T, edit func(*stripesim.Config)) *simulated {
	t.Helper()
	ep := &endpoint{t: t}
	hooks := httptest.NewServer(ep)
	t.Cleanup(hooks.Close)
	cfg := stripesim.Config{APIKey: simKey, WebhookSecret: simSecret, WebhookURL: hooks.URL, StripeMockURL: stripeMock(t), DecisionTimeout: time.Second}
	if edit != nil {
		edit(&cfg)
	}
	sim, err := stripesim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		if v := sim.Violations(); len(v) > 0 {
			t.Errorf("requests off Stripe's API: %q", v)
		}
	})
	c, err := stripeissuing.New(stripeissuing.Config{APIKey: simKey, BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ep.c = c
	sc := stripe.NewClient(simKey, stripe.WithBackends(stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL: stripe.String(srv.URL), MaxNetworkRetries: stripe.Int64(0), LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull},
	})))
	return &simulated{sim: sim, c: c, sc: sc, ep: ep}
}

// card issues a card of ours, c1, through the adapter.
func (s *simulated) card(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	h, err := s.c.EnrollCardholder(ctx, issuer.CardholderRequest{Reference: "holder-1", FirstName: "Awa", LastName: "Diallo",
		Address: issuer.Address{Street: "12 Avenue Bourguiba", City: "Dakar", PostalCode: "10200", CountryISOCode: "SN"}})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := s.c.IssueCard(ctx, issuer.CardRequest{Reference: "c1", CardholderID: h.ID, Brand: issuer.Visa})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// authorize drives a purchase of amount on card.
func (s *simulated) authorize(t *testing.T, card string, amount int64) string {
	t.Helper()
	a, err := s.sc.V1TestHelpersIssuingAuthorizations.Create(context.Background(), &stripe.TestHelpersIssuingAuthorizationCreateParams{
		Card: stripe.String(card), Amount: stripe.Int64(amount),
		MerchantData: &stripe.TestHelpersIssuingAuthorizationCreateMerchantDataParams{Name: stripe.String("Kiosque"), Country: stripe.String("SN")},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// notices delivers the pending events and returns their notifications.
func (s *simulated) notices(t *testing.T) []issuer.Notification {
	t.Helper()
	if err := s.sim.Deliver(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s.ep.take()
}

// step is a notification as a test expects it.
type step struct {
	typ, id, auth string
	amount        int64
	reason        string
}

// steps is what each notification moves.
func steps(ns []issuer.Notification) []step {
	var out []step
	for _, n := range ns {
		s := step{typ: n.Type, reason: n.Reason}
		if tx := n.Transaction; tx != nil {
			s.id, s.auth, s.amount = tx.ID, tx.AuthorizationID, tx.Amount
		}
		if d := n.Dispute; d != nil {
			s.id, s.auth, s.amount, s.reason = d.ID, d.Status, d.Credited, d.Reference
		}
		out = append(out, s)
	}
	return out
}

// TestSimulatedEvents drives Stripe's money flows in the simulation and
// reads each event it sends as the stripe-webhooks function does: what
// each notification moves, in order, every one readable by the
// card-worker and naming our card.
func TestSimulatedEvents(t *testing.T) {
	ctx := context.Background()
	s := newSimulated(t, func(c *stripesim.Config) { c.StandIn = stripesim.StandInApprove })
	ha := s.sc.V1TestHelpersIssuingAuthorizations
	card := s.card(t)
	s.notices(t)
	capture := func(id string, amount int64, open bool) {
		t.Helper()
		p := &stripe.TestHelpersIssuingAuthorizationCaptureParams{CaptureAmount: stripe.Int64(amount)}
		if open {
			p.CloseAuthorization = stripe.Bool(false)
		}
		if _, err := ha.Capture(ctx, id, p); err != nil {
			t.Fatal(err)
		}
	}
	ipi := func(auth string, i int) string {
		a, err := s.sc.V1IssuingAuthorizations.Retrieve(ctx, auth, nil)
		if err != nil || len(a.Transactions) <= i {
			t.Fatalf("authorization %s: %v", auth, err)
		}
		return a.Transactions[i].ID
	}
	check := func(name string, want []step) {
		t.Helper()
		got := s.notices(t)
		if !slices.Equal(steps(got), want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, steps(got), want)
		}
		for _, n := range got {
			if n.CardID != card || n.Reference != "c1" {
				t.Errorf("%s: %s names card %s, ours %q", name, n.ID, n.CardID, n.Reference)
			}
		}
	}

	a := s.authorize(t, card, 4000)
	check("approved", []step{{issuer.NotifyAdvice, a, "", 4000, ""}})
	capture(a, 1500, true)
	capture(a, 3000, false)
	check("captured in part, then beyond what was held", []step{
		{issuer.NotifySettlement, ipi(a, 0), a, 1500, ""},
		{issuer.NotifySettlement, ipi(a, 1), a, 3000, ""},
		{issuer.NotifyReversal, a + "#closed", a, 0, "closed"},
	})

	b := s.authorize(t, card, 2000)
	if _, err := ha.Reverse(ctx, b, &stripe.TestHelpersIssuingAuthorizationReverseParams{ReverseAmount: stripe.Int64(500)}); err != nil {
		t.Fatal(err)
	}
	if _, err := ha.FinalizeAmount(ctx, b, &stripe.TestHelpersIssuingAuthorizationFinalizeAmountParams{FinalAmount: stripe.Int64(1200)}); err != nil {
		t.Fatal(err)
	}
	if _, err := ha.Expire(ctx, b, nil); err != nil {
		t.Fatal(err)
	}
	capture(b, 1100, false)
	check("reversed in part, finalized, expired, captured after", []step{
		{issuer.NotifyAdvice, b, "", 2000, ""},
		{issuer.NotifyReversal, b + "#reversal#1500", b, 500, stripeissuing.ReasonPartialReversal},
		{issuer.NotifyReversal, b + "#reversal#1200", b, 300, stripeissuing.ReasonPartialReversal},
		{issuer.NotifyReversal, b + "#expired", b, 0, "expired"},
		{issuer.NotifySettlement, ipi(b, 0), b, 1100, ""},
		{issuer.NotifyReversal, b + "#closed", b, 0, "closed"},
	})

	late := s.authorize(t, card, lateAmount)
	for _, inc := range []int64{300, lateAmount} {
		if _, err := ha.Increment(ctx, late, &stripe.TestHelpersIssuingAuthorizationIncrementParams{IncrementAmount: stripe.Int64(inc)}); err != nil {
			t.Fatal(err)
		}
	}
	check("approved without us, an increment declined by us, one approved without us", []step{
		{issuer.NotifyAdvice, late, "", lateAmount, issuer.ApprovedWithoutUs},
		{issuer.NotifyAdvice, late + "#increment#13204", late, lateAmount, issuer.ApprovedWithoutUs},
	})

	fc, err := s.sc.V1TestHelpersIssuingTransactions.CreateForceCapture(ctx, &stripe.TestHelpersIssuingTransactionCreateForceCaptureParams{
		Amount: stripe.Int64(700), Card: stripe.String(card)})
	if err != nil {
		t.Fatal(err)
	}
	ur, err := s.sc.V1TestHelpersIssuingTransactions.CreateUnlinkedRefund(ctx, &stripe.TestHelpersIssuingTransactionCreateUnlinkedRefundParams{
		Amount: stripe.Int64(300), Card: stripe.String(card)})
	if err != nil {
		t.Fatal(err)
	}
	check("forced capture, unlinked refund", []step{
		{issuer.NotifySettlement, fc.ID, "", 700, ""},
		{issuer.NotifyRefund, ur.ID, "", 300, ""},
	})

	d, err := s.c.OpenDispute(ctx, issuer.DisputeRequest{Reference: "dispute-1", CardID: card, TransactionID: ipi(a, 1),
		Reason: issuer.DisputeFraudulent, Explanation: stripesim.WinningEvidence, Amount: 3000})
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != issuer.DisputeSubmitted || d.Reference != "dispute-1" || d.TransactionID != ipi(a, 1) || d.Amount != 3000 || d.Credited != 0 {
		t.Errorf("opened %+v", d)
	}
	// Each event's dispute is read as it is now: won, credited.
	won := step{issuer.NotifyDispute, d.ID, issuer.DisputeWon, 3000, "dispute-1"}
	check("dispute won", []step{won, won, won, won})
}

// TestSimulatedRevealSession: the adapter issues a card without reading its
// number or CVC, and a reveal session is an ephemeral key for the card,
// with a secret and an expiry, and nothing of the card's number; the
// simulation refuses one for a card it does not have.
func TestSimulatedRevealSession(t *testing.T) {
	s := newSimulated(t, nil)
	ctx := context.Background()
	card := s.card(t)
	full, err := s.sc.V1IssuingCards.Retrieve(ctx, card, &stripe.IssuingCardRetrieveParams{Expand: []*string{stripe.String("number"), stripe.String("cvc")}})
	if err != nil || len(full.Number) != 16 {
		t.Fatalf("the simulation's card: %v", err)
	}
	rs, err := s.c.RevealSession(ctx, card, "ephkn_pub_test")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rs.EphemeralKeySecret, "ek_test_") || rs.IssuerCardID != card || rs.Issuer != "stripe" ||
		!rs.ExpiresAt.After(time.Now()) || strings.Contains(rs.EphemeralKeySecret, full.Number) {
		t.Errorf("session %+v", rs)
	}
	if p := fmt.Sprint(rs) + fmt.Sprintf("%#v", rs); strings.Contains(p, rs.EphemeralKeySecret) {
		t.Errorf("a print of the session shows its secret: %s", p)
	}
	if _, err := s.c.RevealSession(ctx, "ic_unknown", "ephkn_pub_test"); err == nil {
		t.Error("a session for a card Stripe does not have was created")
	}
}
