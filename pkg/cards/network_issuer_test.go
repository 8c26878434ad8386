package cards_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/providers/issuer"
	"payments/pkg/store/moneystore"
	"payments/pkg/waittest"
)

// TestIssuerFollowsOurCard: after each kind of movement of a card's money
// (issuance, funding, withdrawal, authorization holds, settlements with
// and without the cross-border fee, refunds, reversals, failed-payment
// fees from the card and from the wallet, terminations by the company and
// by the issuer), the sandbox issuer's card comes to have the balance and
// the available balance ours has (a decision's part when the card-worker
// has applied the network's advice), and a read that syncs with the
// issuer logs no difference.
func TestIssuerFollowsOurCard(t *testing.T) {
	logs := apptest.CaptureLogs(t)
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 10)
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	sb := e.sandbox
	card := func(id string) cards.Card {
		t.Helper()
		c, err := cs.Card(ctx, companyID, id)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	atIssuer := func(id string) issuer.Card {
		t.Helper()
		ic, err := sb.Cards.Issuer.Card(ctx, card(id).IssuerCardID)
		if err != nil {
			t.Fatal(err)
		}
		return ic
	}
	call := func(method, target, body string) {
		t.Helper()
		if r := e.Call(e.Cards, token, method, target, body); r.Status != 200 && r.Status != 201 {
			t.Fatalf("%s %s: %d %s", method, target, r.Status, r.Raw)
		}
	}
	var last cards.Transaction // the last authorization approved
	authorize := func(id, amount, country, kind string) {
		t.Helper()
		tx, err := sb.Authorize(ctx, companyID, id, cards.AuthorizeInput{Amount: []byte(amount),
			MerchantName: "Book Shop", MerchantCity: "Somewhere", MerchantCountry: country, Type: kind})
		if err != nil {
			t.Fatal(err)
		}
		if tx.Type == cards.TxAuthorization {
			last = tx
		}
	}
	follow := func(typ cards.TxType, amount string) {
		t.Helper()
		if _, err := sb.Follow(ctx, companyID, last.ID, typ, cards.FollowInput{Amount: []byte(amount)}); err != nil {
			t.Fatal(err)
		}
	}
	var second string // a card the issuer terminates
	steps := []struct {
		name string
		card *string
		do   func()
		// want is our card's balance and available balance afterwards,
		// in cents.
		balance, available int64
	}{
		{"issuance", &cardID, func() {}, 2000, 2000},
		{"funding", &cardID, func() { call("POST", "/cards/"+cardID+"/fund", `{"amount":5}`) }, 2500, 2500},
		{"withdrawal", &cardID, func() { call("POST", "/cards/"+cardID+"/withdraw", `{"amount":2}`) }, 2300, 2300},
		{"authorization hold", &cardID, func() { authorize(cardID, "4", "US", "") }, 2300, 1900},
		{"settlement of less than the hold", &cardID, func() { follow(cards.TxSettlement, "3") }, 2000, 2000},
		{"authorization hold abroad", &cardID, func() { authorize(cardID, "5", "FR", "") }, 2000, 1500},
		// 5.00 + the cross-border fee, 2.5 % + 0.50 = 0.63, from the card.
		{"settlement abroad with its cross-border fee", &cardID, func() { follow(cards.TxSettlement, "") }, 1437, 1437},
		{"refund", &cardID, func() { follow(cards.TxRefund, "2") }, 1637, 1637},
		{"pre-authorization hold", &cardID, func() { authorize(cardID, "6", "US", "PREAUTHORIZATION") }, 1637, 1037},
		{"reversal", &cardID, func() { follow(cards.TxReversal, "") }, 1637, 1637},
		{"verification", &cardID, func() { authorize(cardID, "", "US", "VERIFICATION") }, 1637, 1637},
		{"failed-payment fee from the card", &cardID, func() {
			call("PUT", "/cards/"+cardID+"/freeze", "")
			authorize(cardID, "1", "US", "")
			call("PUT", "/cards/"+cardID+"/unfreeze", "")
		}, 1587, 1587},
		{"hold of all the card has", &cardID, func() { authorize(cardID, "15.87", "US", "PREAUTHORIZATION") }, 1587, 0},
		{"failed-payment fee from the wallet", &cardID, func() { authorize(cardID, "1", "US", "") }, 1587, 0},
		{"reversal of everything held", &cardID, func() { follow(cards.TxReversal, "") }, 1587, 1587},
		{"termination by the company, its open hold reversed", &cardID, func() {
			call("POST", "/cards/"+cardID+"/terminate", "")
		}, 0, 0},
		{"a second card, with a hold", &second, func() {
			r := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+card(cardID).CustomerID+`","amount":3}`)
			if r.Status != 201 {
				t.Fatalf("issue: %s", r.Raw)
			}
			second = r.Str("data", "id")
			authorize(second, "1", "US", "")
		}, 300, 200},
		{"termination by the issuer, its open hold released by the sweeper", &second, func() {
			if _, err := sb.Terminate(ctx, companyID, second, cards.TerminateInput{}); err != nil {
				t.Fatal(err)
			}
			e.finishTerminations()
		}, 0, 0},
	}
	for _, s := range steps {
		s.do()
		ours := card(*s.card)
		if ours.Balance != s.balance || ours.Available() != s.available {
			t.Errorf("after the %s: our card has %d, %d available; want %d, %d", s.name, ours.Balance, ours.Available(), s.balance, s.available)
		}
		// A decision's hold or fee reaches the issuer with the network's
		// advice, which the card-worker applies.
		waittest.Until(t, 30*time.Second, "after the "+s.name+", the issuer's card as ours", func() bool {
			theirs := atIssuer(*s.card)
			return theirs.Balance == ours.Balance && theirs.Available == ours.Available()
		})
		if r := e.Call(e.Cards, token, "GET", "/cards/"+*s.card, ""); r.Status != 200 {
			t.Fatalf("read with sync: %s", r.Raw)
		}
	}
	for _, l := range logs.Lines() {
		if strings.Contains(l, "differs at the issuer") {
			t.Errorf("logged: %s", l)
		}
	}
	e.VerifyCards(companyID)
	e.CheckTimestamps(token)
}
