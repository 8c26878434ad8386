package stripeissuing_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	stripe "github.com/stripe/stripe-go/v85"

	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/stripeissuing/stripesim"
)

// TestOpenDispute opens disputes at the simulation: again with the same
// reference, the same dispute, even past Stripe's 24 hours of
// idempotency; a transaction Stripe does not know, ErrNotFound; one it
// will not have disputed, ErrDeclined.
func TestOpenDispute(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	// No endpoint: Stripe's timeout setting approves.
	s := newSimulated(t, func(c *stripesim.Config) { c.WebhookURL, c.Now, c.StandIn = "", clock, stripesim.StandInApprove })
	card := s.card(t)
	a := s.authorize(t, card, 1250)
	auth, err := s.sc.V1TestHelpersIssuingAuthorizations.Capture(ctx, a, nil)
	if err != nil {
		t.Fatal(err)
	}
	tx := auth.Transactions[0].ID
	r := issuer.DisputeRequest{Reference: "dispute-1", CardID: card, TransactionID: tx, Reason: issuer.DisputeNotAsDescribed, Explanation: "Broken on arrival."}
	first, err := s.c.OpenDispute(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != issuer.DisputeSubmitted || first.Amount != 1250 || first.TransactionID != tx || first.Reference != "dispute-1" {
		t.Errorf("opened %+v", first)
	}
	p := &stripe.IssuingDisputeRetrieveParams{}
	d, err := s.sc.V1IssuingDisputes.Retrieve(ctx, first.ID, p)
	if err != nil || d.Evidence.Reason != "merchandise_not_as_described" || d.Evidence.MerchandiseNotAsDescribed.Explanation != "Broken on arrival." {
		t.Errorf("Stripe's dispute %+v, %v", d, err)
	}
	again, err := s.c.OpenDispute(ctx, r)
	if err != nil || again.ID != first.ID {
		t.Errorf("again: %+v, %v; want %s", again, err, first.ID)
	}
	mu.Lock()
	now = now.Add(25 * time.Hour)
	mu.Unlock()
	if later, err := s.c.OpenDispute(ctx, r); err != nil || later.ID != first.ID {
		t.Errorf("a day later: %+v, %v; want %s", later, err, first.ID)
	}
	other := r
	other.Reference = "dispute-2"
	if _, err := s.c.OpenDispute(ctx, other); !errors.Is(err, issuer.ErrDeclined) {
		t.Errorf("another dispute of the transaction: %v, want ErrDeclined", err)
	}
	other.TransactionID, other.Reference = "ipi_none", "dispute-3"
	if _, err := s.c.OpenDispute(ctx, other); !errors.Is(err, issuer.ErrNotFound) {
		t.Errorf("a transaction Stripe does not know: %v, want ErrNotFound", err)
	}
	other.TransactionID, other.Reason = tx, "UNHAPPY"
	if _, err := s.c.OpenDispute(ctx, other); !errors.Is(err, issuer.ErrDeclined) || !strings.Contains(err.Error(), "UNHAPPY") {
		t.Errorf("an unknown reason: %v, want ErrDeclined", err)
	}
}
