package cards_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"payments/pkg/cards"
	"payments/pkg/money"
	"payments/pkg/providers/issuer"
	"payments/pkg/store/moneystore"
)

// moneyCase is one of the issuer's money cases, played on a fresh card
// through the card-network sandbox: what the network does, and what the
// card, the wallet and the debts are left with.
type moneyCase struct {
	name string
	// card and wallet: what the card holds and the USD wallet keeps
	// beside it, in dollars, before the case.
	card, wallet int64
	play         func(t *testing.T, p moneyPlay)
	// held, balance, payout: the card's holds and balance and the
	// wallet's payout balance after it, in dollars; owed, the debts.
	held, balance, payout, owed string
}

// moneyPlay is what a case plays with.
type moneyPlay struct {
	ctx              context.Context
	e                *networkEnv
	companyID, token string
	card             cards.Card
}

// authorize has the network authorize dollars on the card, approved.
func (p moneyPlay) authorize(t *testing.T, dollars string) cards.Transaction {
	t.Helper()
	tx, err := p.e.sandbox.Authorize(p.ctx, p.companyID, p.card.ID, cards.AuthorizeInput{Amount: json.RawMessage(dollars),
		MerchantName: "Shop", MerchantCity: "Austin"})
	if err != nil || tx.Type != cards.TxAuthorization {
		t.Fatalf("authorize %s: %+v, %v", dollars, tx, err)
	}
	return tx
}

// follow has the network follow authorization a with body.
func (p moneyPlay) follow(t *testing.T, a cards.Transaction, typ cards.TxType, body string) cards.Transaction {
	t.Helper()
	var in cards.FollowInput
	if body != "" {
		if err := json.Unmarshal([]byte(body), &in); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := p.e.sandbox.Follow(p.ctx, p.companyID, a.ID, typ, in)
	if err != nil {
		t.Fatalf("%s %s: %v", typ, body, err)
	}
	return tx
}

// TestCardMoneyFollowsTheIssuer: what the issuer reports moves our ledger
// by the issuer's amount, whatever we held: a settlement above the hold,
// several settlements of one authorization, a settlement after the hold
// expired, a capture with no authorization, a refund linked to none, a
// partial reversal, an approval made without us, and each on a terminated
// card. The card pays what it has for it, then the USD wallet, the rest a
// debt; money never stays on a terminated card. The invariants hold after
// each.
func TestCardMoneyFollowsTheIssuer(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	for _, c := range []moneyCase{
		{"captured above the hold", 20, 5, func(t *testing.T, p moneyPlay) {
			a := p.authorize(t, "10")
			p.follow(t, a, cards.TxSettlement, `{"amount":12}`)
		}, "0", "8", "5", "0"},
		{"captured above the hold, beyond the card", 10, 5, func(t *testing.T, p moneyPlay) {
			a := p.authorize(t, "10")
			p.follow(t, a, cards.TxSettlement, `{"amount":12}`)
		}, "0", "0", "3", "0"},
		{"captured above the hold, beyond the card and the wallet", 10, 1, func(t *testing.T, p moneyPlay) {
			a := p.authorize(t, "10")
			p.follow(t, a, cards.TxSettlement, `{"amount":12}`)
		}, "0", "0", "0", "1"},
		{"captured 4.00 then 5.00, the rest released on close", 20, 0, func(t *testing.T, p moneyPlay) {
			a := p.authorize(t, "10")
			p.follow(t, a, cards.TxSettlement, `{"amount":4,"final":false}`)
			if c := p.cardNow(t); c.Held != 600 {
				t.Errorf("held %d after the first capture, want 600", c.Held)
			}
			p.follow(t, a, cards.TxSettlement, `{"amount":5,"final":false}`)
			p.follow(t, a, cards.TxReversal, ``)
		}, "0", "11", "0", "0"},
		{"captured after it expired", 20, 0, func(t *testing.T, p moneyPlay) {
			a := p.authorize(t, "10")
			if _, err := p.e.sandbox.Expire(p.ctx, p.companyID, a.ID); err != nil {
				t.Fatal(err)
			}
			if c := p.cardNow(t); c.Held != 0 {
				t.Errorf("held %d after the expiry, want 0", c.Held)
			}
			p.follow(t, a, cards.TxSettlement, ``)
			// The settlement closed it: no second capture, no expiry.
			for _, typ := range []cards.TxType{cards.TxSettlement, cards.TxReversal} {
				if _, err := p.e.sandbox.Follow(p.ctx, p.companyID, a.ID, typ, cards.FollowInput{}); !errors.Is(err, cards.ErrAlreadySettled) {
					t.Errorf("%s of the closed authorization: %v, want %v", typ, err, cards.ErrAlreadySettled)
				}
			}
			if _, err := p.e.sandbox.Expire(p.ctx, p.companyID, a.ID); !errors.Is(err, cards.ErrAlreadySettled) {
				t.Errorf("expiry of the closed authorization: %v, want %v", err, cards.ErrAlreadySettled)
			}
		}, "0", "10", "0", "0"},
		{"captured in part after it expired, then the rest", 20, 0, func(t *testing.T, p moneyPlay) {
			a := p.authorize(t, "10")
			if _, err := p.e.sandbox.Expire(p.ctx, p.companyID, a.ID); err != nil {
				t.Fatal(err)
			}
			p.follow(t, a, cards.TxSettlement, `{"amount":4,"final":false}`)
			p.follow(t, a, cards.TxSettlement, `{"amount":5}`)
			if _, err := p.e.sandbox.Follow(p.ctx, p.companyID, a.ID, cards.TxSettlement, cards.FollowInput{}); !errors.Is(err, cards.ErrAlreadySettled) {
				t.Errorf("a third capture: %v, want %v", err, cards.ErrAlreadySettled)
			}
		}, "0", "11", "0", "0"},
		{"a capture forced on an empty card, paid by the wallet", 5, 10, func(t *testing.T, p moneyPlay) {
			p.capture(t, "5")
			p.capture(t, "3")
		}, "0", "0", "7", "0"},
		{"a capture forced on an empty card and wallet, owed", 5, 0, func(t *testing.T, p moneyPlay) {
			p.capture(t, "5")
			p.capture(t, "3")
		}, "0", "0", "0", "3"},
		{"a refund linked to nothing", 5, 0, func(t *testing.T, p moneyPlay) {
			if _, err := p.e.sandbox.Refund(p.ctx, p.companyID, p.card.ID, cards.RefundInput{Amount: json.RawMessage("2")}); err != nil {
				t.Fatal(err)
			}
		}, "0", "7", "0", "0"},
		{"a partial reversal", 20, 0, func(t *testing.T, p moneyPlay) {
			a := p.authorize(t, "10")
			p.follow(t, a, cards.TxReversal, `{"amount":4}`)
		}, "6", "20", "0", "0"},
		{"an approval without us, above what the card has, captured", 10, 3, func(t *testing.T, p moneyPlay) {
			id := p.approvedWithoutUs(t, 1200)
			if c := p.cardNow(t); c.Held != 1200 || c.Available() != -200 {
				t.Errorf("the card held %d, available %d; want 1200, -200", c.Held, c.Available())
			}
			capture, _, last := p.e.capture()
			if _, err := capture.Follow(p.ctx, "", issuer.NotifySettlement, p.card.IssuerCardID, p.card.ID,
				issuer.NetworkTransaction{AuthorizationID: id, Amount: 1200, Close: true}, ""); err != nil {
				t.Fatal(err)
			}
			if err := p.e.deliver(p.ctx, last()); err != nil {
				t.Fatal(err)
			}
		}, "0", "0", "1", "0"},
		{"an increment the issuer approved, captured whole", 20, 0, func(t *testing.T, p moneyPlay) {
			a := p.authorize(t, "10")
			p.approved(t, issuer.NetworkTransaction{ID: a.IssuerTxID + "#increment#1500", AuthorizationID: a.IssuerTxID,
				Kind: issuer.KindAuthorization, Amount: 500})
			if c := p.cardNow(t); c.Held != 1500 {
				t.Errorf("the card held %d after the increment, want 1500", c.Held)
			}
			p.follow(t, a, cards.TxSettlement, `{"amount":15}`)
		}, "0", "5", "0", "0"},
		{"a capture on a terminated card: the wallet, then a debt", 5, 2, func(t *testing.T, p moneyPlay) {
			p.terminate(t)
			p.capture(t, "8")
		}, "0", "0", "0", "1"},
		{"a refund to a terminated card: the wallet", 5, 0, func(t *testing.T, p moneyPlay) {
			p.terminate(t)
			if _, err := p.e.sandbox.Refund(p.ctx, p.companyID, p.card.ID, cards.RefundInput{Amount: json.RawMessage("2")}); err != nil {
				t.Fatal(err)
			}
		}, "0", "0", "7", "0"},
		{"a hold of a terminated card captured above it", 10, 5, func(t *testing.T, p moneyPlay) {
			a := p.authorize(t, "4")
			p.terminate(t) // 6.00 back to the wallet at once, the hold kept
			p.follow(t, a, cards.TxSettlement, `{"amount":5}`)
		}, "0", "0", "10", "0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			companyID, token, walletID, cardID := e.fundedCard(c.card, c.wallet)
			card, err := moneystore.NewCards(e.DB).Card(ctx, companyID, cardID)
			if err != nil {
				t.Fatal(err)
			}
			p := moneyPlay{ctx: ctx, e: e, companyID: companyID, token: token, card: card}
			c.play(t, p)
			got := p.cardNow(t)
			if dollars(got.Held) != c.held || dollars(got.Balance) != c.balance {
				t.Errorf("the card holds %s of %s, want %s of %s", dollars(got.Held), dollars(got.Balance), c.held, c.balance)
			}
			if got := e.Payout(token, walletID); got != c.payout {
				t.Errorf("payout_balance %s, want %s", got, c.payout)
			}
			if got := p.owed(t); got != c.owed {
				t.Errorf("owed %s, want %s", got, c.owed)
			}
			e.VerifyCards(companyID)
		})
	}
}

// cardNow reads the card as it is now.
func (p moneyPlay) cardNow(t *testing.T) cards.Card {
	t.Helper()
	c, err := moneystore.NewCards(p.e.DB).Card(p.ctx, p.companyID, p.card.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// capture has the network force a capture of dollars on the card.
func (p moneyPlay) capture(t *testing.T, dollars string) {
	t.Helper()
	tx, err := p.e.sandbox.Capture(p.ctx, p.companyID, p.card.ID, cards.AuthorizeInput{Amount: json.RawMessage(dollars),
		MerchantName: "Taxi", MerchantCity: "Austin"})
	if err != nil || tx.Type != cards.TxSettlement || tx.OriginalID != "" {
		t.Fatalf("capture %s: %+v, %v", dollars, tx, err)
	}
}

// terminate terminates the card.
func (p moneyPlay) terminate(t *testing.T) {
	t.Helper()
	if r := p.e.Call(p.e.Cards, p.token, "POST", "/cards/"+p.card.ID+"/terminate", `{}`); r.Status != 200 {
		t.Fatalf("terminate: %s", r.Raw)
	}
}

// approvedWithoutUs delivers the issuer's advice of an authorization of
// cents it approved without asking us, and returns its id.
func (p moneyPlay) approvedWithoutUs(t *testing.T, cents int64) string {
	t.Helper()
	id := issuer.NewTransactionID(time.Now())
	p.approved(t, issuer.NetworkTransaction{ID: id, Kind: issuer.KindAuthorization, Amount: cents})
	return id
}

// approved delivers, twice, the issuer's advice that it approved tx
// without asking us: an authorization of its own, or an increment of the
// one tx.AuthorizationID names.
func (p moneyPlay) approved(t *testing.T, tx issuer.NetworkTransaction) {
	t.Helper()
	tx.Currency, tx.Merchant = "USD", &issuer.Merchant{Name: "Hotel", City: "Austin", Country: "US"}
	n := issuer.Notification{ID: issuer.NewEventID(time.Now()), Type: issuer.NotifyAdvice, CardID: p.card.IssuerCardID,
		Reference: p.card.ID, Decision: issuer.Approved, Reason: issuer.ApprovedWithoutUs, CreatedAt: time.Now(), Transaction: &tx}
	body, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // applied once
		if err := p.e.deliver(p.ctx, body); err != nil {
			t.Fatal(err)
		}
	}
}

// owed returns what the company owes in debts, in dollars.
func (p moneyPlay) owed(t *testing.T) string {
	t.Helper()
	var owed int64
	for _, it := range p.e.Call(p.e.Wallets, p.token, "GET", "/debts?status=PENDING&limit=100", "").Items() {
		cents, err := money.ParseMajor(fmt.Sprint(it.(map[string]any)["remaining_amount"]), "USD")
		if err != nil {
			t.Fatal(err)
		}
		owed += cents
	}
	return dollars(owed)
}

// dollars formats cents as the API does.
func dollars(cents int64) string {
	if cents%100 == 0 {
		return fmt.Sprint(cents / 100)
	}
	return strings.TrimRight(fmt.Sprintf("%d.%02d", cents/100, cents%100), "0")
}
