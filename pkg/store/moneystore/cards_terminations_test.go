package moneystore_test

import (
	"context"
	"errors"
	"slices"
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

// hold records an approved authorization of amount on card c and returns
// it with the card after.
func hold(t *testing.T, s *moneystore.Cards, c cards.Card, amount int64) (cards.Transaction, cards.Card) {
	t.Helper()
	ctx := context.Background()
	now := timestamp.Of(time.Now())
	auth := cards.Transaction{
		ID: ids.NewV7(now), CompanyID: c.CompanyID, CardID: c.ID, CustomerID: c.CustomerID,
		Type: cards.TxAuthorization, Kind: cards.KindAuthorization, Status: cards.TxPending, Amount: amount, Hold: amount,
		IssuerTxID: "ntx_" + uuid.NewString(), CreatedAt: now,
	}
	if err := s.Record(ctx, cards.Record{EventID: auth.IssuerTxID, Card: c, HeldDelta: amount, Approve: true,
		Txs: []cards.Transaction{auth}, Now: now}); err != nil {
		t.Fatalf("Record the authorization: %v", err)
	}
	c, err := s.Card(ctx, c.CompanyID, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return auth, c
}

// release returns the record of the reversal of auth on card c: of a
// terminated card when terminated (the hold's money leaves the card), of
// a live one otherwise (it becomes available).
func release(c cards.Card, auth cards.Transaction, terminated bool) cards.Record {
	now := timestamp.Of(time.Now())
	after := auth
	after.Hold, after.Status, after.CompletedAt = 0, cards.TxSuccess, &now
	rev := cards.Transaction{
		ID: ids.NewV7(now), CompanyID: c.CompanyID, CardID: c.ID, CustomerID: c.CustomerID,
		Type: cards.TxReversal, Status: cards.TxSuccess, Amount: auth.Hold, OriginalID: auth.ID, CreatedAt: now, CompletedAt: &now,
	}
	r := cards.Record{Card: c, HeldDelta: -auth.Hold, Original: &auth, OriginalAfter: &after, Txs: []cards.Transaction{rev}, Now: now}
	if terminated {
		r.BalanceDelta = -auth.Hold
	}
	return r
}

// TestCardTerminationIndex: a termination keeps on the card what its open
// holds keep, refunds the rest, and puts the card in the open termination
// index (Terminating finds it once terminated before the cutoff); its
// holds are read a page at a time (HoldsAfter); a release built from the
// card read before the termination, which would leave money on it, is
// refused (ErrChanged); the card leaves the index only once it keeps
// nothing (TerminationDone).
func TestCardTerminationIndex(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s, ws := moneystore.NewCards(db), moneystore.NewWallets(db)
	w := usdWallet(t, db, 5000)
	live := issue(t, s, w, uuid.NewString(), 1000)
	c := live
	var auths []cards.Transaction
	for range 3 {
		var a cards.Transaction
		a, c = hold(t, s, c, 100)
		auths = append(auths, a)
	}
	term := termination(w, c)
	if err := s.Terminate(ctx, term); err != nil {
		t.Fatalf("Terminate: %v", err)
	}
	got, err := s.Card(ctx, c.CompanyID, c.ID)
	if err != nil || got.Status != cards.Terminated || got.Balance != 300 || got.Held != 300 || got.Available() != 0 {
		t.Fatalf("the terminated card %+v, %v; want balance and holds 300", got, err)
	}
	if after, _ := ws.GetWallet(ctx, w.CompanyID, w.ID); after.PayoutBalance != 4000+700 {
		t.Fatalf("wallet after the termination = %+v, want 4700", after)
	}
	due, err := s.Terminating(ctx, term.Now.Add(time.Second), 100)
	if err != nil || len(due) != 1 || due[0].ID != c.ID || due[0].CompanyID != c.CompanyID {
		t.Fatalf("Terminating = %+v, %v; want the card", due, err)
	}
	if due, _ := s.Terminating(ctx, term.Now, 100); len(due) != 0 {
		t.Fatalf("Terminating before its termination = %+v", due)
	}
	if n := storetest.DistinctGSI2Partitions(t, db, schema.OpenTerminationIndex); n != 1 {
		t.Fatalf("%d open termination partitions, want 1", n)
	}
	if err := s.TerminationDone(ctx, c.CompanyID, c.ID); !errors.Is(err, cards.ErrChanged) {
		t.Fatalf("TerminationDone with holds = %v, want ErrChanged", err)
	}

	// Pages of 2 of the card's 5 transactions (the issuance, 3
	// authorizations, the termination): 3 pages, the holds in order.
	var found []string
	pages, after := 0, ""
	for {
		holds, next, err := s.HoldsAfter(ctx, c.CompanyID, c.ID, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, h := range holds {
			found = append(found, h.ID)
		}
		if after = next; after == "" || pages > 5 {
			break
		}
	}
	want := []string{auths[0].ID, auths[1].ID, auths[2].ID}
	if !slices.Equal(found, want) || pages != 3 {
		t.Fatalf("HoldsAfter found %v in %d pages, want %v in 3", found, pages, want)
	}

	// A release built from the live card would make money available on
	// the terminated one: refused.
	if err := s.Record(ctx, release(live, auths[0], false)); !errors.Is(err, cards.ErrChanged) {
		t.Fatalf("a release built from the live card = %v, want ErrChanged", err)
	}
	for _, a := range auths {
		if err := s.Record(ctx, release(got, a, true)); err != nil {
			t.Fatalf("release %s: %v", a.ID, err)
		}
	}
	if holds, next, err := s.HoldsAfter(ctx, c.CompanyID, c.ID, "", 100); err != nil || len(holds) != 0 || next != "" {
		t.Fatalf("HoldsAfter once released = %v, %q, %v", holds, next, err)
	}
	if err := s.TerminationDone(ctx, c.CompanyID, c.ID); err != nil {
		t.Fatalf("TerminationDone: %v", err)
	}
	if due, _ := s.Terminating(ctx, term.Now.Add(time.Second), 100); len(due) != 0 {
		t.Fatalf("Terminating once done = %+v", due)
	}
	if n := storetest.DistinctGSI2Partitions(t, db, schema.OpenTerminationIndex); n != 0 {
		t.Fatalf("%d open termination partitions once done", n)
	}
	if got, _ := s.Card(ctx, c.CompanyID, c.ID); got.Balance != 0 || got.Held != 0 {
		t.Fatalf("card at the end %+v", got)
	}
	if err := s.TerminationDone(ctx, c.CompanyID, uuid.NewString()); !errors.Is(err, cards.ErrNotFound) {
		t.Fatalf("TerminationDone of no card = %v, want ErrNotFound", err)
	}

	// A termination that would refund what the holds keep is refused.
	other := issue(t, s, w, uuid.NewString(), 500)
	_, other = hold(t, s, other, 200)
	bad := termination(w, other)
	bad.Tx.CardDelta = -other.Balance
	if err := s.Terminate(ctx, bad); err == nil {
		t.Fatal("a termination refunding held money was written")
	}
}
