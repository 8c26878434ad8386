package stripesim_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/stripe/stripe-go/v85"

	"payments/pkg/providers/issuer/stripeissuing/stripesim"
)

// previous is an update event's previous_attributes, each field's JSON.
func previous(t *testing.T, e stripe.Event) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, v := range e.Data.PreviousAttributes {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = string(b)
	}
	return out
}

// object reads an event's authorization.
func object(t *testing.T, e stripe.Event) stripe.IssuingAuthorization {
	t.Helper()
	var a stripe.IssuingAuthorization
	if err := json.Unmarshal(e.Data.Raw, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCapturesInPartAndBeyond: a capture that keeps its authorization
// open leaves the rest held, a later one may take more than the
// authorization held, and the last closes it; each capture's update names
// the transactions it added, and the Issuing balance pays the captures and
// the holds.
func TestCapturesInPartAndBeyond(t *testing.T) {
	h := newHarness(t)
	h.sim.TopUp(10000)
	c := h.card(t)
	a := h.authorize(t, c.ID, 4000)
	if got := h.balance(t); got != 6000 {
		t.Errorf("balance %d after a hold of 4000, want 6000", got)
	}
	h.delivered(t)

	first := h.capture(t, a.ID, 1500, true)
	if first.Status != "pending" || first.Amount != 2500 || len(first.Transactions) != 1 || first.Transactions[0].Amount != -1500 {
		t.Errorf("after capturing 1500 of 4000, kept open: status %s, amount %d, transactions %d", first.Status, first.Amount, len(first.Transactions))
	}
	events := h.delivered(t)
	if got := types(events); !slices.Equal(got, []string{"issuing_transaction.created", "issuing_authorization.updated"}) {
		t.Fatalf("events %q", got)
	}
	prev := previous(t, events[1])
	if prev["amount"] != "4000" || prev["transactions"] != "[]" || prev["status"] != "" {
		t.Errorf("the update's previous_attributes %v, want amount 4000 and the transactions", prev)
	}
	if got := h.balance(t); got != 6000 {
		t.Errorf("balance %d after capturing 1500 of the hold, want 6000", got)
	}

	last := h.capture(t, a.ID, 3000, false)
	if last.Status != "closed" || last.Amount != 0 || len(last.Transactions) != 2 || last.Transactions[1].Amount != -3000 {
		t.Errorf("after capturing 3000 of the 2500 left: status %s, amount %d, transactions %d", last.Status, last.Amount, len(last.Transactions))
	}
	events = h.delivered(t)
	if got := types(events); !slices.Equal(got, []string{"issuing_transaction.created", "issuing_authorization.updated"}) {
		t.Fatalf("events %q", got)
	}
	if prev := previous(t, events[1]); prev["status"] != `"pending"` || prev["amount"] != "2500" {
		t.Errorf("the closing update's previous_attributes %v", prev)
	}
	if got := h.balance(t); got != 10000-4500 {
		t.Errorf("balance %d, want %d: the top-up less what was captured", got, 10000-4500)
	}
}

// TestHoldChanges reverses part of a hold, finalizes its amount, expires
// it and captures it after its expiry (Stripe's expired authorizations
// stay capturable), then reverses another in full: each change is one
// issuing_authorization.updated naming the fields it changed.
func TestHoldChanges(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	ha := h.sc.V1TestHelpersIssuingAuthorizations
	c := h.card(t)
	a := h.authorize(t, c.ID, 2000)
	h.delivered(t)
	steps := []struct {
		name   string
		do     func() (*stripe.IssuingAuthorization, error)
		status stripe.IssuingAuthorizationStatus
		amount int64
		events []string
		prev   map[string]string // fields of previous_attributes of the update
	}{
		{"reverse 500", func() (*stripe.IssuingAuthorization, error) {
			return ha.Reverse(ctx, a.ID, &stripe.TestHelpersIssuingAuthorizationReverseParams{ReverseAmount: stripe.Int64(500)})
		}, "pending", 1500, []string{"issuing_authorization.updated"}, map[string]string{"amount": "2000"}},
		{"finalize at 1200", func() (*stripe.IssuingAuthorization, error) {
			return ha.FinalizeAmount(ctx, a.ID, &stripe.TestHelpersIssuingAuthorizationFinalizeAmountParams{FinalAmount: stripe.Int64(1200)})
		}, "pending", 1200, []string{"issuing_authorization.updated"}, map[string]string{"amount": "1500"}},
		{"expire", func() (*stripe.IssuingAuthorization, error) { return ha.Expire(ctx, a.ID, nil) },
			"expired", 0, []string{"issuing_authorization.updated"}, map[string]string{"amount": "1200", "status": `"pending"`}},
		{"capture after the expiry", func() (*stripe.IssuingAuthorization, error) {
			return ha.Capture(ctx, a.ID, &stripe.TestHelpersIssuingAuthorizationCaptureParams{CaptureAmount: stripe.Int64(1100)})
		}, "closed", 0, []string{"issuing_transaction.created", "issuing_authorization.updated"}, map[string]string{"status": `"expired"`, "transactions": "[]"}},
	}
	for _, st := range steps {
		got, err := st.do()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got.Status != st.status || got.Amount != st.amount {
			t.Errorf("%s: status %s, amount %d; want %s, %d", st.name, got.Status, got.Amount, st.status, st.amount)
		}
		events := h.delivered(t)
		if !slices.Equal(types(events), st.events) {
			t.Fatalf("%s: events %q, want %q", st.name, types(events), st.events)
		}
		prev := previous(t, events[len(events)-1])
		for k, v := range st.prev {
			if prev[k] != v {
				t.Errorf("%s: previous %s %s, want %s (all: %v)", st.name, k, prev[k], v, prev)
			}
		}
	}
	if _, err := ha.FinalizeAmount(ctx, a.ID, &stripe.TestHelpersIssuingAuthorizationFinalizeAmountParams{FinalAmount: stripe.Int64(1)}); stripeErr(err) == nil {
		t.Error("finalized a closed authorization")
	}
	if got := h.balance(t); got != -1100 {
		t.Errorf("balance %d, want -1100: what was captured, the holds released", got)
	}
}

// TestIncrements asks for more on an approved authorization: Stripe asks
// the endpoint again, the pending request's amount the increment; an
// approval adds to the hold, a decline leaves it, and either joins the
// request history in an issuing_authorization.updated.
func TestIncrements(t *testing.T) {
	h := newHarnessWith(t, func(c *stripesim.Config) { c.StandIn = stripesim.StandInApprove })
	ctx := context.Background()
	c := h.card(t)
	a := h.authorize(t, c.ID, 1000)
	h.delivered(t)
	for _, tc := range []struct {
		name   string
		inc    int64
		amount int64
		reason stripe.IssuingAuthorizationRequestHistoryReason
		prev   []string // fields of previous_attributes
	}{
		{"approved", 500, 1500, "webhook_approved", []string{"amount", "merchant_amount", "request_history"}},
		{"declined", amountDecline, 1500, "webhook_declined", []string{"request_history"}},
		{"late, approved by the stand-in", amountLate, 1500 + amountLate, "webhook_timeout", []string{"amount", "merchant_amount", "request_history"}},
	} {
		got, err := h.sc.V1TestHelpersIssuingAuthorizations.Increment(ctx, a.ID, &stripe.TestHelpersIssuingAuthorizationIncrementParams{IncrementAmount: stripe.Int64(tc.inc)})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		last := got.RequestHistory[len(got.RequestHistory)-1]
		if got.Amount != tc.amount || got.Status != "pending" || last.Amount != tc.inc || last.Reason != tc.reason || got.PendingRequest != nil {
			t.Errorf("%s: amount %d, status %s, last request %+v", tc.name, got.Amount, got.Status, last)
		}
	}
	requests, _ := h.rc.got()
	if len(requests) != 4 {
		t.Fatalf("%d requests, want the purchase's and three increments'", len(requests))
	}
	asked := object(t, requests[1])
	if asked.Amount != 1000 || asked.PendingRequest == nil || asked.PendingRequest.Amount != 500 || len(asked.RequestHistory) != 1 {
		t.Errorf("the increment's request: amount %d, pending %+v, %d requests before", asked.Amount, asked.PendingRequest, len(asked.RequestHistory))
	}
	events := h.delivered(t)
	if len(events) != 3 {
		t.Fatalf("events %q, want three updates", types(events))
	}
	for i, want := range [][]string{{"amount", "merchant_amount", "request_history"}, {"request_history"}, {"amount", "merchant_amount", "request_history"}} {
		var got []string
		for k := range previous(t, events[i]) {
			got = append(got, k)
		}
		slices.Sort(got)
		if events[i].Type != "issuing_authorization.updated" || !slices.Equal(got, want) {
			t.Errorf("update %d: %s changing %v, want %v", i, events[i].Type, got, want)
		}
	}
}

// TestStandInApproves: with the stand-in set to approve, a purchase whose
// answer is late or off the format is approved all the same, the request
// history saying why.
func TestStandInApproves(t *testing.T) {
	for _, tc := range []struct {
		name   string
		amount int64
		reason stripe.IssuingAuthorizationRequestHistoryReason
	}{
		{"too late", amountLate, "webhook_timeout"},
		{"no Stripe-Version", amountNoVersion, "webhook_error"},
		{"declined", amountDecline, "webhook_declined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarnessWith(t, func(c *stripesim.Config) { c.StandIn = stripesim.StandInApprove })
			c := h.card(t)
			a := h.authorize(t, c.ID, tc.amount)
			approved := tc.reason != "webhook_declined"
			if a.Approved != approved || (a.Status == "pending") != approved || len(a.RequestHistory) != 1 ||
				a.RequestHistory[0].Reason != tc.reason || a.RequestHistory[0].Approved != approved {
				t.Errorf("authorization: approved %v, status %s, history %+v", a.Approved, a.Status, a.RequestHistory)
			}
			events := h.delivered(t)
			if created := object(t, events[len(events)-1]); created.ID != a.ID || created.Approved != approved {
				t.Errorf("issuing_authorization.created %s approved %v", created.ID, created.Approved)
			}
		})
	}
	if _, err := stripesim.New(stripesim.Config{APIKey: "k", StandIn: "maybe"}); err == nil {
		t.Error("a stand-in neither approve nor decline was taken")
	}
}

// TestTransactionsWithoutAuthorization forces a capture and refunds
// unlinked: transactions naming no authorization, each one event, the
// Issuing balance moved by their amounts.
func TestTransactionsWithoutAuthorization(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	c := h.card(t)
	name, country := "Night Train", "FR"
	fc, err := h.sc.V1TestHelpersIssuingTransactions.CreateForceCapture(ctx, &stripe.TestHelpersIssuingTransactionCreateForceCaptureParams{
		Amount: stripe.Int64(700), Card: stripe.String(c.ID), Currency: stripe.String("usd"),
		MerchantData: &stripe.TestHelpersIssuingTransactionCreateForceCaptureMerchantDataParams{Name: stripe.String(name), Country: stripe.String(country)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ur, err := h.sc.V1TestHelpersIssuingTransactions.CreateUnlinkedRefund(ctx, &stripe.TestHelpersIssuingTransactionCreateUnlinkedRefundParams{
		Amount: stripe.Int64(300), Card: stripe.String(c.ID),
	})
	if err != nil {
		t.Fatal(err)
	}
	if fc.Type != "capture" || fc.Amount != -700 || fc.Authorization != nil || fc.Card.ID != c.ID || fc.MerchantData.Name != name {
		t.Errorf("force capture %+v", fc)
	}
	if ur.Type != "refund" || ur.Amount != 300 || ur.Authorization != nil || ur.Card.ID != c.ID {
		t.Errorf("unlinked refund %+v", ur)
	}
	events := h.delivered(t)
	if got := types(events); !slices.Equal(got[len(got)-2:], []string{"issuing_transaction.created", "issuing_transaction.created"}) {
		t.Fatalf("events %q", got)
	}
	var tx stripe.IssuingTransaction
	if err := json.Unmarshal(events[len(events)-2].Data.Raw, &tx); err != nil || tx.ID != fc.ID || tx.Authorization != nil {
		t.Errorf("the force capture's event: %+v, %v", tx, err)
	}
	if got := h.balance(t); got != -400 {
		t.Errorf("balance %d, want -400", got)
	}
	if _, err := h.sc.V1TestHelpersIssuingTransactions.Refund(ctx, fc.ID, &stripe.TestHelpersIssuingTransactionRefundParams{RefundAmount: stripe.Int64(200)}); err != nil {
		t.Errorf("refund of a force capture: %v", err)
	}
}

// TestDroppedDeliveries: the events of the types dropped, and the next n
// events, are never delivered, not even by a later Deliver; the others
// are, in order.
func TestDroppedDeliveries(t *testing.T) {
	h := newHarnessWith(t, func(c *stripesim.Config) { c.DropEvents = []string{"issuing_card.created"} })
	c := h.card(t)
	a := h.authorize(t, c.ID, 900)
	if got := types(h.delivered(t)); !slices.Equal(got, []string{"issuing_cardholder.created", "issuing_authorization.created"}) {
		t.Errorf("delivered %q, want the card's creation dropped", got)
	}
	h.sim.Drop("issuing_transaction.created")
	h.capture(t, a.ID, 0, false)
	h.sim.DropNext(1)
	b := h.authorize(t, c.ID, 800)
	h.capture(t, b.ID, 0, false)
	if got := types(h.delivered(t)); !slices.Equal(got, []string{"issuing_authorization.updated", "issuing_authorization.updated"}) {
		t.Errorf("delivered %q, want the two authorizations' updates alone", got)
	}
	if got := types(h.delivered(t)); len(got) != 0 {
		t.Errorf("delivered again %q", got)
	}
	dropped := h.sim.Dropped()
	if len(dropped) != 4 {
		t.Fatalf("dropped %q", dropped)
	}
	for i, want := range []string{"issuing_card.created evt_", "issuing_transaction.created evt_", "issuing_authorization.created evt_", "issuing_transaction.created evt_"} {
		if len(dropped[i]) <= len(want) || dropped[i][:len(want)] != want {
			t.Errorf("dropped %d: %q, want %q…", i, dropped[i], want)
		}
	}
}

// TestFromEnv reads the simulation's settings from the environment.
func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		standIn string
		drop    []string
		ok      bool
	}{
		{"nothing", nil, "", nil, true},
		{"approve", map[string]string{stripesim.EnvStandIn: "approve"}, "approve", nil, true},
		{"decline", map[string]string{stripesim.EnvStandIn: " decline "}, "decline", nil, true},
		{"drops", map[string]string{stripesim.EnvDropEvents: "issuing_transaction.created, issuing_dispute.closed,"}, "",
			[]string{"issuing_transaction.created", "issuing_dispute.closed"}, true},
		{"unknown stand-in", map[string]string{stripesim.EnvStandIn: "yes"}, "", nil, false},
		{"the request cannot be dropped", map[string]string{stripesim.EnvDropEvents: "issuing_authorization.request"}, "", nil, false},
		{"no event type", map[string]string{stripesim.EnvDropEvents: "transactions"}, "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c stripesim.Config
			err := c.FromEnv(func(k string) string { return tc.env[k] })
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok %v", err, tc.ok)
			}
			if tc.ok && (c.StandIn != tc.standIn || !slices.Equal(c.DropEvents, tc.drop)) {
				t.Errorf("stand-in %q, drops %q", c.StandIn, c.DropEvents)
			}
		})
	}
}
