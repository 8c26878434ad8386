package stripeissuing_test

import (
	"context"
	"slices"
	"testing"
	"time"

	stripe "github.com/stripe/stripe-go/v85"

	"payments/pkg/providers/issuer"
)

// TestStatements lists what the simulation moved and holds, oldest first,
// a page at a time, from a time on, and reads its Issuing balance.
func TestStatements(t *testing.T) {
	ctx := context.Background()
	s := newSimulated(t, nil)
	s.sim.TopUp(100000)
	card := s.card(t)
	var auths []string
	for i := range 5 {
		auths = append(auths, s.authorize(t, card, int64(1000+i)))
	}
	ha := s.sc.V1TestHelpersIssuingAuthorizations
	for _, a := range auths[:3] {
		if _, err := ha.Capture(ctx, a, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ha.Reverse(ctx, auths[3], nil); err != nil {
		t.Fatal(err)
	}
	tx, err := s.sc.V1IssuingAuthorizations.Retrieve(ctx, auths[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	refund, err := s.sc.V1TestHelpersIssuingTransactions.Refund(ctx, tx.Transactions[0].ID, &stripe.TestHelpersIssuingTransactionRefundParams{RefundAmount: stripe.Int64(250)})
	if err != nil {
		t.Fatal(err)
	}
	since := time.Now().Add(-time.Minute)

	var txns []issuer.StatementTransaction
	pages := 0
	for after := ""; ; pages++ {
		page, next, err := s.c.Transactions(ctx, since, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 2 {
			t.Fatalf("page of %d, limit 2", len(page))
		}
		txns = append(txns, page...)
		if next == "" {
			break
		}
		if next != page[len(page)-1].ID {
			t.Errorf("next %s, want the page's last, %s", next, page[len(page)-1].ID)
		}
		after = next
	}
	if pages != 1 || len(txns) != 4 {
		t.Fatalf("%d transactions in %d pages after the first, want 4 in 2 pages", len(txns), pages+1)
	}
	for i, a := range auths[:3] {
		if st := txns[i]; st.Type != issuer.NotifySettlement || st.AuthorizationID != a || st.Amount != int64(1000+i) ||
			st.CardID != card || st.Reference != "c1" || st.Merchant == nil || st.Merchant.Name != "Kiosque" {
			t.Errorf("transaction %d: %+v", i, st)
		}
	}
	if st := txns[3]; st.ID != refund.ID || st.Type != issuer.NotifyRefund || st.Amount != 250 || st.AuthorizationID != auths[0] {
		t.Errorf("the refund: %+v", st)
	}
	if later, _, err := s.c.Transactions(ctx, time.Now().Add(time.Minute), "", 10); err != nil || len(later) != 0 {
		t.Errorf("transactions from a minute on: %v, %v", later, err)
	}

	page, next, err := s.c.Authorizations(ctx, since, "", 3)
	if err != nil || next != page[2].ID {
		t.Fatalf("first page: next %q, %v", next, err)
	}
	rest, next, err := s.c.Authorizations(ctx, since, next, 3)
	if err != nil || next != "" || len(rest) != 2 {
		t.Fatalf("second page: %d, next %q, %v", len(rest), next, err)
	}
	var got []string
	for _, a := range append(page, rest...) {
		got = append(got, a.ID+" "+a.Status)
		if a.CardID != card || a.Reference != "c1" || !a.Approved || a.Kind != issuer.KindAuthorization {
			t.Errorf("authorization %+v", a)
		}
		if (a.Held != 0) != (a.Status == issuer.AuthorizationPending) {
			t.Errorf("authorization %s %s holds %d", a.ID, a.Status, a.Held)
		}
	}
	want := []string{auths[0] + " CLOSED", auths[1] + " CLOSED", auths[2] + " CLOSED", auths[3] + " REVERSED", auths[4] + " PENDING"}
	if !slices.Equal(got, want) {
		t.Errorf("authorizations %v, want %v", got, want)
	}
	if rest[1].Held != 1004 {
		t.Errorf("the pending authorization holds %d, want 1004", rest[1].Held)
	}
	balance, err := s.c.Balance(ctx)
	if want := int64(100000 - 1000 - 1001 - 1002 + 250 - 1004); err != nil || balance != want {
		t.Errorf("balance %d, %v; want %d", balance, err, want)
	}
}
