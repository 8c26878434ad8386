package stripesim_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stripe/stripe-go/v85"

	"payments/pkg/providers/issuer/stripeissuing/stripesim"
)

// TestStateOutlivesARestart: with a StateFile, a simulation started again
// (make run stopped and started, its data kept) has Stripe's records as
// they were: the card, its status and its authorizations are found (a
// closed one with its capture), a capture made before is refunded, a hold
// made before is captured, the cardholder takes a new card, the Issuing
// balance goes on from what was left, and an event not delivered yet is
// delivered by the new one.
func TestStateOutlivesARestart(t *testing.T) {
	file := filepath.Join(t.TempDir(), "stripe-sim.json")
	withState := func(c *stripesim.Config) { c.StateFile, c.Balance = file, 100000 }
	ctx := context.Background()

	before := newHarnessWith(t, withState)
	card := before.card(t)
	kept := before.authorize(t, card.ID, 1000)
	closed := before.authorize(t, card.ID, 700)
	captured := before.capture(t, closed.ID, 700, false)
	before.deliver(t)
	frozen, err := before.sc.V1IssuingCards.Update(ctx, card.ID, &stripe.IssuingCardUpdateParams{Status: stripe.String("inactive")})
	if err != nil || frozen.Status != "inactive" {
		t.Fatalf("freeze: %+v, %v", frozen, err)
	}
	balance := before.balance(t)
	if balance != 100000-1000-700 {
		t.Fatalf("balance %d before the restart, want 98300", balance)
	}

	after := newHarnessWith(t, withState)
	if got := after.balance(t); got != balance {
		t.Errorf("balance %d after the restart, want %d", got, balance)
	}
	c, err := after.sc.V1IssuingCards.Retrieve(ctx, card.ID, nil)
	if err != nil || c.Status != "inactive" || c.Cardholder == nil || c.Cardholder.ID != card.Cardholder.ID {
		t.Fatalf("card after the restart: %+v, %v; want it inactive, its cardholder %s", c, err, card.Cardholder.ID)
	}
	if _, err := after.sc.V1IssuingCards.Update(ctx, card.ID, &stripe.IssuingCardUpdateParams{Status: stripe.String("active")}); err != nil {
		t.Fatal(err)
	}
	a, err := after.sc.V1IssuingAuthorizations.Retrieve(ctx, kept.ID, nil)
	if err != nil || a.Status != "pending" || a.Amount != 1000 || a.Card == nil || a.Card.Status != "active" {
		t.Fatalf("authorization after the restart: %+v, %v; want pending, 1000 held, its card as it is now", a, err)
	}
	cl, err := after.sc.V1IssuingAuthorizations.Retrieve(ctx, closed.ID, nil)
	if err != nil || len(cl.Transactions) != 1 || cl.Transactions[0].ID != captured.Transactions[0].ID {
		t.Fatalf("the captured authorization after the restart: %+v, %v; want its capture", cl, err)
	}
	// The capture is refunded and a new card made for the same cardholder.
	if _, err := after.sc.V1TestHelpersIssuingTransactions.Refund(ctx, captured.Transactions[0].ID,
		&stripe.TestHelpersIssuingTransactionRefundParams{RefundAmount: stripe.Int64(200)}); err != nil {
		t.Fatalf("refund of a capture made before the restart: %v", err)
	}
	if _, err := after.sc.V1IssuingCards.Create(ctx, &stripe.IssuingCardCreateParams{
		Cardholder: stripe.String(card.Cardholder.ID), Type: stripe.String("virtual"), Currency: stripe.String("usd"),
		Status: stripe.String("active"), Metadata: map[string]string{"reference": "card-2"},
	}); err != nil {
		t.Fatalf("a new card of the cardholder made before the restart: %v", err)
	}
	if _, err := after.sc.V1TestHelpersIssuingAuthorizations.Capture(ctx, kept.ID, &stripe.TestHelpersIssuingAuthorizationCaptureParams{}); err != nil {
		t.Fatalf("capture of an authorization made before the restart: %v", err)
	}
	if got := after.balance(t); got != balance+200 {
		t.Errorf("balance %d, want %d: the capture of what was held, the refund of 200", got, balance+200)
	}
	if got := after.delivered(t); len(got) == 0 || string(got[0].Type) != "issuing_card.updated" {
		t.Errorf("delivered %q after the restart, want the freeze's event, not delivered before it, first", types(got))
	}
}
