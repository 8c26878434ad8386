package pawapay

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"payments/pkg/providers/operator"
	"payments/pkg/providers/operator/pawapay/pawapaysim"
)

// TestPaymentRecords: the reconciliation's read of a payment is the status
// check with the amount pawaPay holds, in minor units; an unknown id is
// ErrNotFound; a status that cannot be read is unknown, never a record.
func TestPaymentRecords(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	paid, deposit := "6a0e3c52-0000-4000-8000-00000000aa01", "6a0e3c52-0000-4000-8000-00000000aa02"
	payout := request(operator.Payout, paid, "237670000001")
	payout.Amount = 7250
	if _, err := r.client.Submit(ctx, payout); err != nil {
		t.Fatal(err)
	}
	collection := request(operator.Collection, deposit, "237670000000")
	if _, err := r.client.Submit(ctx, collection); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(pawapaysim.DefaultDelay)
	for _, tt := range []struct {
		kind   operator.Kind
		id     string
		state  operator.State
		amount int64
	}{{operator.Payout, paid, operator.Succeeded, 7250}, {operator.Collection, deposit, operator.Failed, 5000}} {
		rec, err := r.client.Payment(ctx, tt.kind, tt.id)
		if err != nil || rec.State != tt.state || rec.Amount != tt.amount || rec.Currency != "XAF" || rec.OrderID != tt.id {
			t.Errorf("Payment(%s %s) = %+v, %v; want %s, %d XAF", tt.kind, tt.id, rec, err, tt.state, tt.amount)
		}
	}
	if _, err := r.client.Payment(ctx, operator.Payout, "6a0e3c52-0000-4000-8000-00000000aa09"); !errors.Is(err, operator.ErrNotFound) {
		t.Errorf("an unknown payout: %v, want ErrNotFound", err)
	}
	unreachable := "6a0e3c52-0000-4000-8000-00000000aa03"
	if _, err := r.client.Submit(ctx, request(operator.Payout, unreachable, "237670000998")); err != nil {
		t.Fatal(err)
	}
	if rec, err := r.client.Payment(ctx, operator.Payout, unreachable); !errors.Is(err, operator.ErrUnavailable) {
		t.Errorf("a status that cannot be read: %+v, %v; want ErrUnavailable", rec, err)
	}
}

// TestWalletBalances: GET /v2/wallet-balances read into minor units, one
// wallet per country; the simulation's float moves by what it completed.
func TestWalletBalances(t *testing.T) {
	r := newRig(t)
	ctx := context.Background()
	if _, err := r.client.Submit(ctx, request(operator.Payout, "6a0e3c52-0000-4000-8000-00000000bb01", "237670000001")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.client.Submit(ctx, request(operator.Payout, "6a0e3c52-0000-4000-8000-00000000bb02", "237670000000")); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(pawapaysim.DefaultDelay)
	bs, err := r.client.Balances(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]operator.Balance{}
	for _, b := range bs {
		got[b.Country] = b
	}
	if b := got["CMR"]; b.Currency != "XAF" || b.Amount != pawapaysim.DefaultFloat-5000 {
		t.Errorf("Cameroon's wallet %+v: want the float less the payout completed (the failed one moved nothing)", b)
	}
	if b := got["COD"]; b.Currency != "CDF" || b.Amount != pawapaysim.DefaultFloat*100 {
		t.Errorf("Congo's wallet %+v: want the float in cents", b)
	}
	r.sim.FailNext(http.StatusInternalServerError, "", 3)
	if _, err := r.client.Balances(ctx); !errors.Is(err, operator.ErrUnavailable) {
		t.Errorf("a 500 on every try: %v, want ErrUnavailable", err)
	}
}
