package moneystore_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/cards"
	"payments/pkg/ids"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
	"payments/pkg/timestamp"
)

// TestCardHoldIndex: an authorization whose hold is open is in the open
// hold index (HoldsBefore finds it once its creation is before the
// cutoff); the write that releases its hold takes it out, and a release
// written from a stale read changes nothing.
func TestCardHoldIndex(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := moneystore.NewCards(db)
	w := usdWallet(t, db, 10_000)
	a := issuance(w, uuid.NewString(), 1000, 100, 5)
	if err := s.Accept(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.Settle(ctx, issued(a)); err != nil {
		t.Fatal(err)
	}
	card, err := s.Card(ctx, w.CompanyID, a.Card.ID)
	if err != nil {
		t.Fatal(err)
	}
	now := timestamp.Of(time.Now())
	auth := cards.Transaction{
		ID: ids.NewV7(now), CompanyID: card.CompanyID, CardID: card.ID, CustomerID: card.CustomerID,
		Type: cards.TxAuthorization, Kind: cards.KindAuthorization, Status: cards.TxPending, Amount: 300, Hold: 300,
		IssuerTxID: "ntx_" + uuid.NewString(), CreatedAt: now,
	}
	if err := s.Record(ctx, cards.Record{EventID: "evt_" + uuid.NewString(), Card: card, HeldDelta: 300, Approve: true,
		Txs: []cards.Transaction{auth}, Now: now}); err != nil {
		t.Fatalf("Record the authorization: %v", err)
	}
	holds, err := s.HoldsBefore(ctx, now.Add(time.Second), 100)
	if err != nil || len(holds) != 1 || holds[0].ID != auth.ID || holds[0].Hold != 300 {
		t.Fatalf("HoldsBefore = %+v, %v; want the authorization", holds, err)
	}
	if holds, _ := s.HoldsBefore(ctx, now, 100); len(holds) != 0 {
		t.Fatalf("HoldsBefore its creation = %+v", holds)
	}
	if n := storetest.DistinctGSI2Partitions(t, db, schema.OpenHoldIndex); n != 1 {
		t.Fatalf("%d open hold partitions with one hold, want 1", n)
	}

	release := func(card cards.Card, was cards.Transaction) error {
		after := was
		after.Hold, after.Status, after.CompletedAt = 0, cards.TxSuccess, &now
		rev := cards.Transaction{
			ID: ids.NewV7(now), CompanyID: card.CompanyID, CardID: card.ID, CustomerID: card.CustomerID,
			Type: cards.TxReversal, Status: cards.TxSuccess, Amount: was.Hold, OriginalID: was.ID, CreatedAt: now, CompletedAt: &now,
		}
		return s.Record(ctx, cards.Record{Card: card, HeldDelta: -was.Hold, Original: &was, OriginalAfter: &after,
			Txs: []cards.Transaction{rev}, Now: now})
	}
	if err := release(card, auth); err != nil {
		t.Fatalf("Record the reversal: %v", err)
	}
	if err := release(card, auth); err == nil {
		t.Fatal("a second release from the same read was written")
	}
	if holds, err := s.HoldsBefore(ctx, now.Add(time.Second), 100); err != nil || len(holds) != 0 {
		t.Fatalf("HoldsBefore after the release = %+v, %v", holds, err)
	}
	if n := storetest.DistinctGSI2Partitions(t, db, schema.OpenHoldIndex); n != 0 {
		t.Fatalf("%d open hold partitions after the release", n)
	}
	if c, _ := s.Card(ctx, card.CompanyID, card.ID); c.Held != 0 || c.Balance != 1000 {
		t.Fatalf("card held %d, balance %d; want 0, 1000", c.Held, c.Balance)
	}
}
