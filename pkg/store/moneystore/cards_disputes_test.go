package moneystore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/cards"
	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/page"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/timestamp"
)

// disputeEvent returns card.dispute.created of d at now.
func disputeEvent(t *testing.T, d cards.Dispute, now time.Time) events.Event {
	t.Helper()
	ev, err := events.Build(d.CompanyID, events.CardDisputeCreatedData{CardDispute: events.CardDispute{
		DisputeID: d.ID, CardID: d.CardID, CustomerID: d.CustomerID, TransactionID: d.TransactionID, Status: "SUBMITTED",
		Amount: "1", CreditedAmount: "0", Currency: "USD"}, CreatedAt: timestamp.Format(now)}, now)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// credit returns the write of a credit of amount to card c for dispute d
// as read.
func credit(d cards.Dispute, c cards.Card, amount int64) cards.DisputeMove {
	now := timestamp.Of(time.Now())
	tx := cards.Transaction{ID: ids.NewV7(now), CompanyID: c.CompanyID, CardID: c.ID, CustomerID: c.CustomerID,
		Type: cards.TxDispute, Status: cards.TxSuccess, Amount: amount, CardDelta: amount, OriginalID: d.TransactionID,
		CreatedAt: now, CompletedAt: &now}
	after := d
	after.Credited += amount
	after.Movements = append(after.Movements, cards.DisputeMovement{TxID: tx.ID, CardDelta: amount})
	return cards.DisputeMove{Dispute: d, After: after, Card: c, CardDelta: amount, Tx: &tx, Now: now}
}

// TestCardDisputes: one dispute claims a settlement until the issuer
// refuses it; attaching the issuer's id and each movement are conditioned
// on the dispute as read, so that a write from a stale read moves nothing;
// the lookups and the list find what was written.
func TestCardDisputes(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := moneystore.NewCards(db)
	w := usdWallet(t, db, 10_000)
	c := issue(t, s, w, uuid.NewString(), 1000)
	now := timestamp.Of(time.Now())
	settlement := ids.NewV7(now)
	d := cards.Dispute{ID: ids.NewV7(now), CompanyID: c.CompanyID, CardID: c.ID, CustomerID: c.CustomerID,
		TransactionID: settlement, IssuerTxID: "ntx_1", Status: cards.DisputeOpening, Amount: 500,
		Reason: "FRAUDULENT", Explanation: "not me", CreatedAt: now, UpdatedAt: now}
	if err := s.OpenDispute(ctx, d); err != nil {
		t.Fatal(err)
	}
	again := d
	again.ID = ids.NewV7(now)
	if err := s.OpenDispute(ctx, again); !errors.Is(err, cards.ErrDisputeExists) {
		t.Fatalf("a second dispute of the settlement: %v, want ErrDisputeExists", err)
	}
	// Refused: FAILED, the settlement free again, and FAILED stays.
	if err := s.FailDispute(ctx, d, "refused", now); err != nil {
		t.Fatal(err)
	}
	if err := s.FailDispute(ctx, d, "refused", now); !errors.Is(err, cards.ErrChanged) {
		t.Fatalf("failed twice: %v, want ErrChanged", err)
	}
	if _, found, err := s.TransactionDispute(ctx, c.CompanyID, settlement); err != nil || found {
		t.Fatalf("the refused dispute still claims its settlement: %v, %v", found, err)
	}
	if err := s.OpenDispute(ctx, again); err != nil {
		t.Fatalf("a dispute once the first was refused: %v", err)
	}
	if err := s.AttachDispute(ctx, d, "dp_1", []events.Event{disputeEvent(t, d, now)}, now); !errors.Is(err, cards.ErrChanged) {
		t.Fatalf("attach a FAILED dispute: %v, want ErrChanged", err)
	}
	if err := s.AttachDispute(ctx, again, "dp_2", []events.Event{disputeEvent(t, again, now)}, now); err != nil {
		t.Fatal(err)
	}
	got, found, err := s.IssuerDispute(ctx, c.CompanyID, "dp_2")
	if err != nil || !found || got.ID != again.ID || got.Status != cards.DisputeSubmitted || got.Seq != 1 {
		t.Fatalf("IssuerDispute = %+v, %v, %v", got, found, err)
	}

	// A credit from the dispute as read; the same write again, and one from
	// a read whose credit is stale, move nothing.
	first := credit(got, c, 500)
	if err := s.MoveDispute(ctx, first); err != nil {
		t.Fatal(err)
	}
	stale := credit(got, c, 500)
	if err := s.MoveDispute(ctx, stale); !errors.Is(err, cards.ErrChanged) {
		t.Fatalf("a credit from a stale read: %v, want ErrChanged", err)
	}
	now2, err := s.Dispute(ctx, c.CompanyID, again.ID)
	if err != nil || now2.Credited != 500 || now2.Seq != 1 || len(now2.Movements) != 1 || now2.Movements[0] != first.After.Movements[0] {
		t.Fatalf("the dispute = %+v, %v", now2, err)
	}
	if card, err := s.Card(ctx, c.CompanyID, c.ID); err != nil || card.Balance != 1500 {
		t.Fatalf("card balance %d, %v; want 1500", card.Balance, err)
	}
	if _, err := s.Transaction(ctx, c.CompanyID, stale.Tx.ID); !errors.Is(err, cards.ErrTransactionNotFound) {
		t.Fatalf("the stale credit's transaction was written: %v", err)
	}

	all, err := s.Disputes(ctx, c.CompanyID, cards.DisputeFilter{}, page.Request{Page: 1, Limit: 10})
	if err != nil || all.Total != 2 || all.Items[0].ID != again.ID || all.Items[1].ID != d.ID {
		t.Fatalf("Disputes = %+v, %v", all, err)
	}
	failed, err := s.Disputes(ctx, c.CompanyID, cards.DisputeFilter{Status: cards.DisputeFailed, CardID: c.ID}, page.Request{Page: 1, Limit: 10})
	if err != nil || failed.Total != 1 || failed.Items[0].ID != d.ID || failed.Items[0].Error != "refused" {
		t.Fatalf("the FAILED disputes = %+v, %v", failed, err)
	}
	if _, err := s.Dispute(ctx, uuid.NewString(), again.ID); !errors.Is(err, cards.ErrDisputeNotFound) {
		t.Fatalf("another company's dispute: %v, want ErrDisputeNotFound", err)
	}
	if _, err := s.CardSettlement(ctx, c.CompanyID, c.ID, "ntx_nope"); !errors.Is(err, cards.ErrTransactionNotFound) {
		t.Fatalf("CardSettlement of no settlement: %v", err)
	}
}
