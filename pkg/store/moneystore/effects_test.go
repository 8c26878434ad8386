package moneystore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/idempotency"
	"payments/pkg/payments"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets"
)

// claimAt returns the claim of request hash at now with the middleware's
// lease and retention.
func claimAt(hash string, now time.Time) idempotency.Claim {
	return idempotency.Claim{
		RequestHash: hash, LeaseID: uuid.NewString(), Now: now,
		LeaseUntil: now.Add(idempotency.Lease), ExpiresAt: now.Add(idempotency.Retention),
	}
}

// TestIdempotencyEffects: a movement made by a request that holds a key
// records its effect on the key's record in its own transaction: a
// takeover after the lease returns it, and the record takes one effect
// only, from the claim that holds the key; a movement refused for it
// writes nothing.
func TestIdempotencyEffects(t *testing.T) {
	db := storetest.NewDB(t)
	keys, pays, ws := store.NewIdempotency(db), moneystore.NewPayments(db), moneystore.NewWallets(db)
	ctx := context.Background()
	w := fundedWallet(t, db, 1000)
	t0 := time.Now()
	first := claimAt("h", t0)
	if _, ok, err := keys.Claim(ctx, w.CompanyID, "k", first); err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	held := &idempotency.Held{CompanyID: w.CompanyID, Key: "k", LeaseID: first.LeaseID}
	heldCtx := idempotency.WithHeld(ctx, held)
	p, e, ev := newPayout(w, 90, 10, "order-1")
	if err := pays.CreatePayout(heldCtx, p, e, ev); err != nil {
		t.Fatal(err)
	}
	if _, ok := idempotency.HeldBy(heldCtx); ok {
		t.Fatal("the effect is recorded, yet the key is still offered to the next transaction")
	}

	// A second movement under the same claim, or under a claim whose
	// lease was taken over, is refused and writes nothing.
	again := idempotency.WithHeld(ctx, &idempotency.Held{CompanyID: w.CompanyID, Key: "k", LeaseID: first.LeaseID})
	q, e2, ev2 := newPayout(w, 90, 10, "order-2")
	if err := pays.CreatePayout(again, q, e2, ev2); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("a second effect under one key: %v", err)
	}
	rec, ok, err := keys.Claim(ctx, w.CompanyID, "k", claimAt("h", t0.Add(idempotency.Lease)))
	if err != nil || !ok || rec.Effect.ID != p.ID || rec.Response != nil {
		t.Fatalf("takeover: %v %v %+v", ok, err, rec)
	}
	if err := pays.CreatePayout(again, q, e2, ev2); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("a movement under a lease taken over: %v", err)
	}
	if _, err := pays.GetPayment(ctx, w.CompanyID, q.ID); !errors.Is(err, payments.ErrNotFound) {
		t.Fatalf("a refused movement wrote its payment: %v", err)
	}
	got, _ := ws.GetWallet(ctx, w.CompanyID, w.ID)
	if got.PayoutReserved != 100 {
		t.Fatalf("reserved %d, want the first payout's 100 alone", got.PayoutReserved)
	}
	if err := wallets.VerifyLedger(ctx, ws, w.CompanyID); err != nil {
		t.Fatal(err)
	}
}
