package stripesim_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85"

	"payments/pkg/providers/issuer/stripeissuing/stripesim"
)

// clock is a time a test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestLists lists authorizations and transactions as Stripe does: newest
// first, filtered by their creation time, a page of limit after an object
// (starting_after) or before it (ending_before: the nearest, newest
// first), has_more saying whether more are left that way.
func TestLists(t *testing.T) {
	// Events are signed at the clock's time: it stays within the 5 minutes
	// a receiver accepts.
	clk := &clock{now: time.Now().Add(-3 * time.Minute)}
	h := newHarnessWith(t, func(c *stripesim.Config) { c.Now = clk.Now })
	ctx := context.Background()
	c := h.card(t)
	var auths, txns []string // oldest first
	for i := range 5 {
		clk.add(30 * time.Second)
		a := h.authorize(t, c.ID, int64(100+i))
		auths = append(auths, a.ID)
		txns = append(txns, h.capture(t, a.ID, 0, false).Transactions[0].ID)
	}
	since := clk.Now().Add(-time.Minute).Unix() // the last three
	page := func(p stripe.ListParams) ([]string, bool) {
		t.Helper()
		p.Single = true
		l := h.sc.V1IssuingAuthorizations.List(ctx, &stripe.IssuingAuthorizationListParams{ListParams: p, CreatedRange: &stripe.RangeQueryParams{GreaterThanOrEqual: since}})
		if err := l.Err(); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, a := range l.Data() {
			ids = append(ids, a.ID)
		}
		return ids, l.Meta().HasMore
	}
	for _, tc := range []struct {
		name string
		p    stripe.ListParams
		want []string
		more bool
	}{
		{"newest first", stripe.ListParams{Limit: stripe.Int64(2)}, []string{auths[4], auths[3]}, true},
		{"after", stripe.ListParams{Limit: stripe.Int64(2), StartingAfter: stripe.String(auths[3])}, []string{auths[2]}, false},
		// stripe-go gives a page before an object oldest first.
		{"before", stripe.ListParams{Limit: stripe.Int64(1), EndingBefore: stripe.String(auths[2])}, []string{auths[3]}, true},
		{"before, to the end", stripe.ListParams{Limit: stripe.Int64(5), EndingBefore: stripe.String(auths[2])}, []string{auths[3], auths[4]}, false},
	} {
		got, more := page(tc.p)
		if !slices.Equal(got, tc.want) || more != tc.more {
			t.Errorf("%s: %v (more %v), want %v (more %v)", tc.name, got, more, tc.want, tc.more)
		}
	}
	p := &stripe.IssuingTransactionListParams{}
	p.AddExpand("data.card")
	var got []string
	for tx, err := range h.sc.V1IssuingTransactions.List(ctx, p).All(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if tx.Card == nil || tx.Card.Metadata["reference"] != "card-1" || tx.Authorization == nil || tx.Type != "capture" {
			t.Errorf("listed transaction %+v", tx)
		}
		got = append(got, tx.ID)
	}
	slices.Reverse(got)
	if !slices.Equal(got, txns) {
		t.Errorf("transactions %v, want %v", got, txns)
	}
}
