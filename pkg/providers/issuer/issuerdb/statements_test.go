package issuerdb_test

import (
	"context"
	"testing"
	"time"

	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuerdb"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/store/storetest"
)

// TestSandboxNetworkStatements: against DynamoDB Local, the sandbox
// network logs what it moves whatever becomes of its deliveries (here none
// reaches us): each authorization with what it holds, each settlement and
// refund once per notification (sent again, the same transaction), a
// partial settlement and a partial reversal moving the hold; the sandbox
// issuer lists them by creation, a page after another, each authorization
// as it stands (a terminated card's holds nothing; one past
// issuersandbox.HoldExpiry is EXPIRED).
func TestSandboxNetworkStatements(t *testing.T) {
	ctx := context.Background()
	s := issuerdb.New(storetest.NewDB(t).DB)
	holder, err := s.PutCardholder(ctx, sandboxCardholder("cus_statements"))
	if err != nil {
		t.Fatal(err)
	}
	live, err := s.PutCard(ctx, sandboxCard(holder.ID, 10_000))
	if err != nil {
		t.Fatal(err)
	}
	ended, err := s.PutCard(ctx, sandboxCard(holder.ID, 10_000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TerminateCard(ctx, ended.ID); err != nil {
		t.Fatal(err)
	}
	delivered := 0
	n := issuersandbox.NewNetwork(func(context.Context, []byte) (issuer.AuthorizationAnswer, error) {
		return issuer.AuthorizationAnswer{Decision: issuer.Approved}, nil
	}, func(context.Context, []byte) error { delivered++; return nil })
	n.Statements = s
	at := sandboxIssuerNow
	n.Now = func() time.Time { at = at.Add(time.Millisecond); return at }
	shop := issuer.Merchant{Name: "Shop", City: "Austin", Country: "US"}
	authorize := func(card issuersandbox.Card, amount int64) string {
		t.Helper()
		a, err := n.Authorize(ctx, "", card.ID, card.Reference, issuer.KindAuthorization, amount, shop)
		if err != nil || a.Answer.Decision != issuer.Approved {
			t.Fatalf("authorize: %+v, %v", a, err)
		}
		return a.Request.ID
	}
	settledAuth, partialAuth, reversedAuth, endedAuth := authorize(live, 500), authorize(live, 900), authorize(live, 700), authorize(ended, 300)
	if _, err := n.Follow(ctx, "evt_settle", issuer.NotifySettlement, live.ID, live.Reference, issuer.NetworkTransaction{AuthorizationID: settledAuth, Amount: 500, Close: true}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Follow(ctx, "evt_settle", issuer.NotifySettlement, live.ID, live.Reference, issuer.NetworkTransaction{AuthorizationID: settledAuth, Amount: 500, Close: true}, ""); err != nil {
		t.Fatal(err) // sent again: the same notification
	}
	if _, err := n.Follow(ctx, "evt_partial", issuer.NotifySettlement, live.ID, live.Reference, issuer.NetworkTransaction{AuthorizationID: partialAuth, Amount: 400}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Follow(ctx, "evt_refund", issuer.NotifyRefund, live.ID, live.Reference, issuer.NetworkTransaction{AuthorizationID: settledAuth, Amount: 200}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Follow(ctx, "evt_reverse", issuer.NotifyReversal, live.ID, live.Reference, issuer.NetworkTransaction{AuthorizationID: reversedAuth, Amount: 300}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Follow(ctx, "evt_reverse", issuer.NotifyReversal, live.ID, live.Reference, issuer.NetworkTransaction{AuthorizationID: reversedAuth, Amount: 300}, ""); err != nil {
		t.Fatal(err) // sent again: released once
	}

	sb := issuersandbox.New(s, nil)
	sb.Now = func() time.Time { return at }
	var txs []issuer.StatementTransaction
	for after := ""; ; {
		page, next, err := sb.Transactions(ctx, sandboxIssuerNow, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		txs = append(txs, page...)
		if after = next; after == "" {
			break
		}
	}
	want := []struct {
		typ, auth string
		amount    int64
	}{{issuer.NotifySettlement, settledAuth, 500}, {issuer.NotifySettlement, partialAuth, 400}, {issuer.NotifyRefund, settledAuth, 200}}
	if len(txs) != len(want) {
		t.Fatalf("transactions %+v, want %d", txs, len(want))
	}
	for i, w := range want {
		if tx := txs[i]; tx.Type != w.typ || tx.AuthorizationID != w.auth || tx.Amount != w.amount || tx.Reference != live.Reference ||
			tx.CardID != live.ID || tx.Merchant == nil || tx.Merchant.Name != "Shop" || tx.ID == "" {
			t.Errorf("transaction %d: %+v, want %s of %d on %s", i, tx, w.typ, w.amount, w.auth)
		}
	}
	if later, _, err := sb.Transactions(ctx, txs[1].CreatedAt, "", 10); err != nil || len(later) != 2 || later[0].ID != txs[1].ID {
		t.Errorf("the transactions since the second: %+v, %v", later, err)
	}

	as, _, err := sb.Authorizations(ctx, sandboxIssuerNow, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]issuer.StatementAuthorization{}
	for _, a := range as {
		held[a.ID] = a
	}
	for id, w := range map[string]struct {
		status string
		held   int64
	}{
		settledAuth:  {issuer.AuthorizationClosed, 0},
		partialAuth:  {issuer.AuthorizationPending, 500},
		reversedAuth: {issuer.AuthorizationPending, 400},
		endedAuth:    {issuer.AuthorizationReversed, 0},
	} {
		if a := held[id]; a.Status != w.status || a.Held != w.held || !a.Approved {
			t.Errorf("authorization %s: %+v, want %s holding %d", id, a, w.status, w.held)
		}
	}
	sb.Now = func() time.Time { return at.Add(issuersandbox.HoldExpiry + time.Minute) }
	as, _, err = sb.Authorizations(ctx, sandboxIssuerNow, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.ID == partialAuth && (a.Status != issuer.AuthorizationExpired || a.Held != 0) {
			t.Errorf("past the network's expiry: %+v, want EXPIRED", a)
		}
	}
	if delivered == 0 {
		t.Fatal("the network delivered nothing")
	}
}
