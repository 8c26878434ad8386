package cards_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	awsevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/fees"
	"payments/pkg/function/sweeper"
	"payments/pkg/idempotency"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuerdb"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/waittest"
	"payments/pkg/wallets"
)

// disputeBody is the body of a dispute the tests open.
const disputeBody = `{"reason":"not_received","explanation":"The books never came."}`

// purchase authorizes amount (USD, as JSON) at a merchant at home on the
// company's card and settles all of it: the SETTLEMENT.
func (e *networkEnv) purchase(companyID, cardID, amount string) cards.Transaction {
	e.T.Helper()
	ctx := context.Background()
	auth, err := e.sandbox.Authorize(ctx, companyID, cardID, cards.AuthorizeInput{Amount: []byte(amount),
		MerchantName: "Book Shop", MerchantCity: "Austin", MerchantCountry: "US"})
	if err != nil || auth.Type != cards.TxAuthorization {
		e.T.Fatalf("authorize %s: %+v, %v", amount, auth, err)
	}
	st, err := e.sandbox.Follow(ctx, companyID, auth.ID, cards.TxSettlement, cards.FollowInput{})
	if err != nil || st.Type != cards.TxSettlement {
		e.T.Fatalf("settle %s: %+v, %v", amount, st, err)
	}
	return st
}

// hold places a pre-authorization of amount (USD, as JSON) on the card.
func (e *networkEnv) hold(companyID, cardID, amount string) {
	e.T.Helper()
	tx, err := e.sandbox.Authorize(context.Background(), companyID, cardID, cards.AuthorizeInput{Amount: []byte(amount),
		MerchantName: "Hotel", MerchantCity: "Austin", Type: "PREAUTHORIZATION"})
	if err != nil || tx.Type != cards.TxAuthorization {
		e.T.Fatalf("hold %s: %+v, %v", amount, tx, err)
	}
}

// openDispute disputes settlement txID with disputeBody, and expects it
// SUBMITTED at the issuer, nothing credited yet.
func (e *networkEnv) openDispute(token, txID string) apptest.Result {
	e.T.Helper()
	r := e.Call(e.Cards, token, "POST", "/cards/transactions/"+txID+"/disputes", disputeBody)
	if r.Status != 201 || r.Str("data", "status") != "SUBMITTED" || r.Str("data", "credited_amount") != "0" ||
		r.Str("data", "transaction_id") != txID || r.Str("data", "reason") != "NOT_RECEIVED" ||
		!strings.HasPrefix(r.Str("data", "issuer_dispute_id"), "dp_") {
		e.T.Fatalf("open a dispute: %d %s", r.Status, r.Raw)
	}
	return r
}

// sweepNetwork runs the sweeper at at and returns what its card_network
// step delivered.
func (e *networkEnv) sweepNetwork(at time.Time) int {
	e.T.Helper()
	resp, err := apptest.MustSweeper(e.T, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return at })(context.Background(), awsevents.EventBridgeEvent{})
	if err != nil {
		e.T.Fatal(err)
	}
	o := resp.(sweeper.Report)["card_network"]
	if o.Error != "" {
		e.T.Fatalf("card_network: %s", o.Error)
	}
	return o.Done
}

// awaitDispute waits until dispute id is status with credited (USD, as
// the routes show it), and returns it.
func (e *networkEnv) awaitDispute(token, id, status, credited string) apptest.Result {
	e.T.Helper()
	var r apptest.Result
	waittest.Until(e.T, 30*time.Second, "dispute "+id+" "+status+" credited "+credited, func() bool {
		r = e.Call(e.Cards, token, "GET", "/cards/disputes/"+id, "")
		return r.Status == 200 && r.Str("data", "status") == status && r.Str("data", "credited_amount") == credited
	})
	return r
}

// at returns key of item i of a list's data, as Result.Str does.
func at(r apptest.Result, i int, key string) string {
	items := r.Items()
	if i >= len(items) {
		return "<no item>"
	}
	v := items[i].(map[string]any)[key]
	switch x := v.(type) {
	case nil:
		return "<nil>"
	case string:
		return x
	}
	return fmt.Sprint(v)
}

// card reads the company's card.
func (e *networkEnv) card(companyID, cardID string) cards.Card {
	e.T.Helper()
	c, err := moneystore.NewCards(e.DB).Card(context.Background(), companyID, cardID)
	if err != nil {
		e.T.Fatal(err)
	}
	return c
}

// awaitIssuerCard waits until the issuer's card has the balance ours has:
// the card-worker told it of every movement.
func (e *networkEnv) awaitIssuerCard(companyID, cardID string) {
	e.T.Helper()
	ctx := context.Background()
	waittest.Until(e.T, 30*time.Second, "the issuer's card has our balance", func() bool {
		c := e.card(companyID, cardID)
		ic, err := e.sandbox.Cards.Issuer.Card(ctx, c.IssuerCardID)
		return err == nil && (ic.Balance == c.Balance || c.Status == cards.Terminated && ic.Status == issuer.CardTerminated)
	})
}

// decide delivers the network's decision of the disputes opened before:
// the sweeper's card_network step, DisputeDecisionAfter later.
func (e *networkEnv) decide() {
	e.T.Helper()
	if n := e.sweepNetwork(time.Now().Add(issuersandbox.DisputeDecisionAfter + time.Second)); n < 1 {
		e.T.Fatalf("card_network delivered %d, want the decision", n)
	}
}

// TestDisputeWon: a dispute opened on a settlement is SUBMITTED at the
// issuer (card.dispute.created); the network's provisional credit,
// delivered by the sweeper's card_network step, credits the card with
// one DISPUTE transaction; the win, delivered DisputeDecisionAfter later,
// keeps it: WON, card.dispute.updated for each change, the issuer's card
// told, the ledgers whole.
func TestDisputeWon(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 0)
	st := e.purchase(companyID, cardID, "12.5")
	opened := e.openDispute(token, st.ID)
	id := opened.Str("data", "id")
	if got := e.eventCount(token, "card.dispute.created"); got != 1 {
		t.Fatalf("%d card.dispute.created, want 1", got)
	}
	if c := e.card(companyID, cardID); c.Balance != 750 {
		t.Fatalf("card balance %d before the provisional credit, want 750", c.Balance)
	}

	if n := e.sweepNetwork(time.Now()); n < 1 {
		t.Fatalf("card_network delivered %d, want the provisional credit", n)
	}
	credited := e.awaitDispute(token, id, "SUBMITTED", "12.5")
	if c := e.card(companyID, cardID); c.Balance != 2000 {
		t.Errorf("card balance %d after the provisional credit, want 2000", c.Balance)
	}
	moves := credited.Data()["card_transaction_ids"].([]any)
	if len(moves) != 1 {
		t.Fatalf("movements %v, want one", moves)
	}
	tx := e.Call(e.Cards, token, "GET", fmt.Sprintf("/cards/%s/transactions/%s", cardID, moves[0]), "")
	if tx.Str("data", "type") != "DISPUTE" || tx.Str("data", "amount") != "12.5" || tx.Str("data", "status") != "SUCCESS" ||
		tx.Str("data", "original_transaction_id") != st.ID || tx.Str("data", "description") != "Dispute credit" {
		t.Errorf("the provisional credit's transaction: %s", tx.Raw)
	}
	if list := e.Call(e.Cards, token, "GET", "/cards/"+cardID+"/transactions?type=dispute", ""); len(list.Items()) != 1 {
		t.Errorf("the card's DISPUTE transactions: %s", list.Raw)
	}
	e.awaitIssuerCard(companyID, cardID)
	e.VerifyCards(companyID)

	e.decide()
	won := e.awaitDispute(token, id, "WON", "12.5")
	if c := e.card(companyID, cardID); c.Balance != 2000 {
		t.Errorf("card balance %d once won, want 2000", c.Balance)
	}
	if moves := won.Data()["card_transaction_ids"].([]any); len(moves) != 1 {
		t.Errorf("a win moved money again: %v", moves)
	}
	waittest.Until(t, 30*time.Second, "two card.dispute.updated", func() bool { return e.eventCount(token, "card.dispute.updated") == 2 })
	ev := e.Call(e.Webhooks, token, "GET", "/events?type=card.dispute.updated&limit=1", "")
	if data := ev.Items()[0].(map[string]any)["body"].(map[string]any)["data"].(map[string]any); data["status"] != "WON" || data["previous_status"] != "SUBMITTED" ||
		data["card_transaction_id"] != nil || data["dispute_id"] != id {
		t.Errorf("the win's event: %s", ev.Raw)
	}
	e.awaitIssuerCard(companyID, cardID)
	e.VerifyCards(companyID)
}

// TestDisputeLost: a lost dispute takes the provisional credit back from
// what the card has available, then from the USD wallet's
// payout_available, and owes the rest as a card_dispute debt
// (debt.recovery.pending), in one DISPUTE transaction; each case first
// empties the card (holds) and the wallet as far as it says.
func TestDisputeLost(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	tests := []struct {
		name                string
		wallet              int64  // USD on the wallet
		hold                string // USD held on the card before the decision
		card, held          int64  // the card once lost, cents
		payout, debt        string // the wallet and the debt once lost
		fromCard, fromWallt int64
	}{
		{"from the card", 0, "", 787, 0, "0", "", 1213, 0},
		{"from the wallet", 15, "20", 2000, 2000, "2.87", "", 0, 1213},
		{"a debt", 0, "20", 2000, 2000, "0", "12.13", 0, 0},
		{"card, wallet, then a debt", 3, "15", 1500, 1500, "0", "4.13", 500, 300},
	}
	type opened struct{ companyID, token, walletID, cardID, id string }
	var all []opened
	for _, tt := range tests {
		companyID, token, walletID, cardID := e.fundedCard(20, tt.wallet)
		st := e.purchase(companyID, cardID, "12.13")
		all = append(all, opened{companyID, token, walletID, cardID, e.openDispute(token, st.ID).Str("data", "id")})
	}
	if n := e.sweepNetwork(time.Now()); n < len(tests) {
		t.Fatalf("card_network delivered %d, want the %d provisional credits", n, len(tests))
	}
	for i, tt := range tests {
		o := all[i]
		e.awaitDispute(o.token, o.id, "SUBMITTED", "12.13")
		if c := e.card(o.companyID, o.cardID); c.Balance != 2000 {
			t.Fatalf("%s: card balance %d after the provisional credit, want 2000", tt.name, c.Balance)
		}
		if tt.hold != "" {
			e.hold(o.companyID, o.cardID, tt.hold)
		}
	}
	e.decide()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := all[i]
			lost := e.awaitDispute(o.token, o.id, "LOST", "0")
			if c := e.card(o.companyID, o.cardID); c.Balance != tt.card || c.Held != tt.held {
				t.Errorf("card balance %d, held %d; want %d, %d", c.Balance, c.Held, tt.card, tt.held)
			}
			if got := e.Payout(o.token, o.walletID); got != tt.payout {
				t.Errorf("wallet payout_balance %s, want %s", got, tt.payout)
			}
			moves := lost.Data()["card_transaction_ids"].([]any)
			if len(moves) != 2 {
				t.Fatalf("movements %v, want the credit and its taking back", moves)
			}
			back, err := moneystore.NewCards(e.DB).Transaction(context.Background(), o.companyID, moves[1].(string))
			if err != nil {
				t.Fatal(err)
			}
			if back.Type != cards.TxDispute || back.Amount != 1213 || back.CardDelta != -tt.fromCard || back.WalletDelta != -tt.fromWallt {
				t.Errorf("the credit taken back: %+v", back)
			}
			debts := e.Call(e.Wallets, o.token, "GET", "/debts", "")
			switch {
			case tt.debt == "" && len(debts.Items()) != 0:
				t.Errorf("debts %s, want none", debts.Raw)
			case tt.debt != "" && (len(debts.Items()) != 1 || at(debts, 0, "amount") != tt.debt ||
				at(debts, 0, "fee_type") != "card_dispute" || at(debts, 0, "transaction_id") != back.ID):
				t.Errorf("debts %s, want %s owed for %s", debts.Raw, tt.debt, back.ID)
			}
			pending := 0
			if tt.debt != "" {
				pending = 1
			}
			waittest.Until(t, 30*time.Second, "the dispute's events", func() bool {
				return e.eventCount(o.token, "card.dispute.updated") == 2 && e.eventCount(o.token, "debt.recovery.pending") == pending
			})
			e.awaitIssuerCard(o.companyID, o.cardID)
			e.VerifyCards(o.companyID)
		})
	}
}

// TestDisputeTerminatedCard: a terminated card never takes money: the
// provisional credit of a dispute of its settlement goes to the USD
// wallet (a REFUND entry), and a loss takes it back from there.
func TestDisputeTerminatedCard(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, walletID, cardID := e.fundedCard(20, 0)
	st := e.purchase(companyID, cardID, "12.13")
	id := e.openDispute(token, st.ID).Str("data", "id")
	if r := e.Call(e.Cards, token, "POST", "/cards/"+cardID+"/terminate", `{}`); r.Status != 200 {
		t.Fatalf("terminate: %s", r.Raw)
	}
	if got := e.Payout(token, walletID); got != "7.87" {
		t.Fatalf("wallet payout_balance %s after the termination, want 7.87", got)
	}
	e.sweepNetwork(time.Now())
	credited := e.awaitDispute(token, id, "SUBMITTED", "12.13")
	if c := e.card(companyID, cardID); c.Balance != 0 || c.Status != cards.Terminated {
		t.Errorf("terminated card %s with balance %d", c.Status, c.Balance)
	}
	if got := e.Payout(token, walletID); got != "20" {
		t.Errorf("wallet payout_balance %s after the credit, want 20", got)
	}
	move := credited.Data()["card_transaction_ids"].([]any)[0].(string)
	var entries []map[string]any
	for _, it := range e.Call(e.Wallets, token, "GET", "/wallet/transactions?limit=100", "").Items() {
		if en := it.(map[string]any); en["reference"] == move {
			entries = append(entries, en)
		}
	}
	if len(entries) != 1 || entries[0]["type"] != "REFUND" || fmt.Sprint(entries[0]["amount"]) != "12.13" {
		t.Errorf("the credit's ledger entries: %v", entries)
	}
	e.VerifyCards(companyID)

	e.decide()
	e.awaitDispute(token, id, "LOST", "0")
	if got := e.Payout(token, walletID); got != "7.87" {
		t.Errorf("wallet payout_balance %s once lost, want 7.87", got)
	}
	e.VerifyCards(companyID)
}

// TestDisputeReportsApplyOnce: the network's reports of a dispute,
// delivered again, concurrently, and out of order (the provisional credit
// after the loss), move its money once each: the card ends as the last
// state says, with two DISPUTE transactions and one event per change.
func TestDisputeReportsApplyOnce(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 0)
	st := e.purchase(companyID, cardID, "12.13")
	id := e.openDispute(token, st.ID).Str("data", "id")
	// The reports as the network keeps them, before any is delivered.
	due, err := issuerdb.New(e.DB.DB).DueNotices(context.Background(), time.Now().Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	var submitted, lost []byte
	for _, n := range due {
		no, err := issuer.ParseNotification(n.Body)
		if err != nil || no.Type != issuer.NotifyDispute {
			continue
		}
		if no.Dispute.Status == issuer.DisputeSubmitted {
			submitted = n.Body
		} else {
			lost = n.Body
		}
	}
	if submitted == nil || lost == nil {
		t.Fatalf("the network keeps %d reports, not the dispute's two", len(due))
	}
	ctx := context.Background()
	deliver := func(bodies ...[]byte) {
		t.Helper()
		var wg sync.WaitGroup
		for _, b := range bodies {
			wg.Go(func() {
				if err := e.deliver(ctx, b); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	deliver(submitted, submitted, submitted, submitted, submitted, submitted, submitted, submitted)
	e.awaitDispute(token, id, "SUBMITTED", "12.13")
	if c := e.card(companyID, cardID); c.Balance != 2000 {
		t.Errorf("card balance %d after the credit delivered eight times, want 2000", c.Balance)
	}
	deliver(lost, lost, submitted, lost)
	r := e.awaitDispute(token, id, "LOST", "0")
	deliver(submitted) // the older state, after the newer one
	if c := e.card(companyID, cardID); c.Balance != 787 {
		t.Errorf("card balance %d once lost, whatever was delivered again, want 787", c.Balance)
	}
	if moves := r.Data()["card_transaction_ids"].([]any); len(moves) != 2 {
		t.Errorf("movements %v, want two", moves)
	}
	again := e.Call(e.Cards, token, "GET", "/cards/disputes/"+id, "")
	if again.Raw != r.Raw {
		t.Errorf("the older report changed the dispute:\n%s\nwas\n%s", again.Raw, r.Raw)
	}
	waittest.Until(t, 30*time.Second, "one event per change", func() bool {
		return e.eventCount(token, "card.dispute.updated") == 2 && e.eventCount(token, "card.dispute.created") == 1
	})
	e.awaitIssuerCard(companyID, cardID)
	e.VerifyCards(companyID)
}

// TestDisputeOpenedAtTheIssuer: a dispute the issuer reports that we did
// not open (Stripe's dashboard) is created from the settlement it names,
// reason null, and its credit followed.
func TestDisputeOpenedAtTheIssuer(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 0)
	st := e.purchase(companyID, cardID, "12.5")
	c := e.card(companyID, cardID)
	report := func(id string) []byte {
		b, err := json.Marshal(issuer.Notification{ID: id, Type: issuer.NotifyDispute, CardID: c.IssuerCardID, Reference: cardID,
			Dispute:   &issuer.Dispute{ID: "dp_dashboard", TransactionID: st.IssuerTxID, Status: issuer.DisputeSubmitted, Amount: 1250, Credited: 1250},
			CreatedAt: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ctx := context.Background()
	for _, id := range []string{"evt_dashboard_1", "evt_dashboard_2"} { // a replay under another id
		if err := e.deliver(ctx, report(id)); err != nil {
			t.Fatal(err)
		}
	}
	list := e.Call(e.Cards, token, "GET", "/cards/disputes?card_id="+cardID, "")
	if len(list.Items()) != 1 || at(list, 0, "issuer_dispute_id") != "dp_dashboard" || at(list, 0, "reason") != "<nil>" ||
		at(list, 0, "transaction_id") != st.ID || at(list, 0, "credited_amount") != "12.5" {
		t.Fatalf("disputes: %s", list.Raw)
	}
	if c := e.card(companyID, cardID); c.Balance != 2000 {
		t.Errorf("card balance %d, want 2000", c.Balance)
	}
	// The settlement is disputed now.
	if r := e.Call(e.Cards, token, "POST", "/cards/transactions/"+st.ID+"/disputes", disputeBody); r.Status != 409 || r.Str("code") != "DISPUTE_EXISTS" {
		t.Errorf("dispute it again: %d %s", r.Status, r.Raw)
	}
	e.VerifyCards(companyID)
}

// TestDisputeRequests: who may dispute what, and the bad requests, each
// a 4xx naming its field or code before anything is recorded; the lists.
func TestDisputeRequests(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(50, 0)
	_, other, _, otherCard := e.fundedCard(20, 0)
	st := e.purchase(companyID, cardID, "12.5")
	refused := e.purchase(companyID, cardID, "3.14") // the issuer refuses disputes of .14
	auth, err := e.sandbox.Authorize(context.Background(), companyID, cardID, cards.AuthorizeInput{Amount: []byte("1"),
		MerchantName: "Cafe", MerchantCity: "Austin"})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", cards.MaxExplanation+1)
	path := func(id string) string { return "/cards/transactions/" + id + "/disputes" }
	tests := []struct {
		name, token, path, body string
		status                  int
		code, field             string
	}{
		{"no reason", token, path(st.ID), `{"explanation":"x"}`, 400, "INVALID_FIELD", "reason"},
		{"unknown reason", token, path(st.ID), `{"reason":"bored","explanation":"x"}`, 400, "INVALID_FIELD", "reason"},
		{"no explanation", token, path(st.ID), `{"reason":"FRAUDULENT","explanation":"  "}`, 400, "INVALID_FIELD", "explanation"},
		{"explanation too long", token, path(st.ID), `{"reason":"FRAUDULENT","explanation":"` + long + `"}`, 400, "INVALID_FIELD", "explanation"},
		{"unknown field", token, path(st.ID), `{"reason":"FRAUDULENT","explanation":"x","amount":1}`, 400, "INVALID_FIELD", "amount"},
		{"another company's settlement", other, path(st.ID), disputeBody, 404, "TRANSACTION_NOT_FOUND", ""},
		{"not a transaction id", token, path("nope"), disputeBody, 404, "TRANSACTION_NOT_FOUND", ""},
		{"an authorization", token, path(auth.ID), disputeBody, 400, "TRANSACTION_NOT_DISPUTABLE", ""},
		{"refused by the issuer", token, path(refused.ID), disputeBody, 422, "DISPUTE_DECLINED", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Call(e.Cards, tt.token, "POST", tt.path, tt.body)
			if field := r.Str("field"); r.Status != tt.status || r.Str("code") != tt.code || field != tt.field && !(field == "<nil>" && tt.field == "") {
				t.Fatalf("%d %s, want %d %s naming %q", r.Status, r.Raw, tt.status, tt.code, tt.field)
			}
		})
	}
	// The refused dispute is recorded FAILED, and the settlement free again.
	failed := e.Call(e.Cards, token, "GET", "/cards/disputes?status=failed", "")
	if len(failed.Items()) != 1 || at(failed, 0, "transaction_id") != refused.ID || at(failed, 0, "error") == "" {
		t.Fatalf("failed disputes: %s", failed.Raw)
	}
	if r := e.Call(e.Cards, token, "POST", path(refused.ID), disputeBody); r.Status != 422 {
		t.Errorf("dispute the refused settlement again: %d %s", r.Status, r.Raw)
	}

	id := e.openDispute(token, st.ID).Str("data", "id")
	if r := e.Call(e.Cards, token, "POST", path(st.ID), disputeBody); r.Status != 409 || r.Str("code") != "DISPUTE_EXISTS" {
		t.Errorf("dispute it again: %d %s", r.Status, r.Raw)
	}
	if r := e.Call(e.Cards, other, "GET", "/cards/disputes/"+id, ""); r.Status != 404 || r.Str("code") != "DISPUTE_NOT_FOUND" {
		t.Errorf("another company's dispute: %d %s", r.Status, r.Raw)
	}
	if r := e.Call(e.Cards, token, "GET", "/cards/disputes/nope", ""); r.Status != 404 || r.Str("code") != "DISPUTE_NOT_FOUND" {
		t.Errorf("not a dispute id: %d %s", r.Status, r.Raw)
	}
	if r := e.Call(e.Cards, other, "GET", "/cards/disputes", ""); r.Status != 200 || len(r.Items()) != 0 {
		t.Errorf("another company's list: %s", r.Raw)
	}
	lists := []struct {
		query string
		want  []string // statuses, newest first
	}{
		{"", []string{"SUBMITTED", "FAILED", "FAILED"}},
		{"?status=SUBMITTED", []string{"SUBMITTED"}},
		{"?card_id=" + cardID + "&limit=1", []string{"SUBMITTED"}},
		{"?card_id=" + otherCard, nil},
	}
	for _, l := range lists {
		r := e.Call(e.Cards, token, "GET", "/cards/disputes"+l.query, "")
		var got []string
		for i := range r.Items() {
			got = append(got, at(r, i, "status"))
		}
		if r.Status != 200 || fmt.Sprint(got) != fmt.Sprint(l.want) {
			t.Errorf("GET /cards/disputes%s: %v, want %v (%s)", l.query, got, l.want, r.Raw)
		}
	}
	for _, q := range []struct{ query, field string }{{"?status=open", "status"}, {"?card_id=nope", "card_id"}, {"?limit=0", "limit"}} {
		if r := e.Call(e.Cards, token, "GET", "/cards/disputes"+q.query, ""); r.Status != 400 || r.Str("field") != q.field {
			t.Errorf("GET /cards/disputes%s: %d %s, want 400 naming %s", q.query, r.Status, r.Raw, q.field)
		}
	}
	e.VerifyCards(companyID)
}

// TestDisputeKeys: a dispute opened with an Idempotency-Key: the same
// request again answers the first response and opens nothing more; a
// first request killed between its commit and its stored answer is
// answered, once its lease has ended, from the dispute its key recorded
// in the same transaction.
func TestDisputeKeys(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(50, 0)
	path := func(tx cards.Transaction) string { return "/cards/transactions/" + tx.ID + "/disputes" }
	replayed := func(first, r apptest.Result) {
		t.Helper()
		if r.Status != first.Status || r.Raw != first.Raw || r.Headers[idempotency.ReplayedHeader] != "true" {
			t.Fatalf("not a replay of %d %s: %d %v %s", first.Status, first.Raw, r.Status, r.Headers, r.Raw)
		}
	}
	st := e.purchase(companyID, cardID, "5")
	first := e.Call(e.Cards, token, "POST", path(st), disputeBody, idempotency.Header, "dispute-1")
	if first.Status != 201 {
		t.Fatalf("open: %d %s", first.Status, first.Raw)
	}
	replayed(first, e.Call(e.Cards, token, "POST", path(st), disputeBody, idempotency.Header, "dispute-1"))

	killed := e.CardsFunction(t, apptest.Failing(e.Cfg, func(in any) bool {
		u, ok := in.(*dynamodb.UpdateItemInput)
		return ok && strings.Contains(aws.ToString(u.UpdateExpression), "response_status")
	}))
	st2 := e.purchase(companyID, cardID, "6")
	lost := e.Call(killed, token, "POST", path(st2), disputeBody, idempotency.Header, "dispute-2")
	if lost.Status != 201 {
		t.Fatalf("open, its answer not kept: %d %s", lost.Status, lost.Raw)
	}
	if r := e.Call(e.Cards, token, "POST", path(st2), disputeBody, idempotency.Header, "dispute-2"); r.Status != 409 || r.Str("code") != "IDEMPOTENCY_KEY_IN_USE" {
		t.Fatalf("while the lease runs: %d %s", r.Status, r.Raw)
	}
	e.EndLease(companyID, "dispute-2")
	replayed(lost, e.Call(e.Cards, token, "POST", path(st2), disputeBody, idempotency.Header, "dispute-2"))
	if r := e.Call(e.Cards, token, "GET", "/cards/disputes", ""); len(r.Items()) != 2 {
		t.Errorf("%d disputes, want 2: %s", len(r.Items()), r.Raw)
	}
	e.VerifyCards(companyID)
}

// TestDisputeIssuerUnanswered: a dispute whose issuer does not answer is
// 502 CARD_ISSUER_UNAVAILABLE with the dispute, OPENING; the request again,
// with its key or without, asks the issuer again for the same dispute.
func TestDisputeIssuerUnanswered(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(50, 0)
	down := e.IssuerDown(t)
	for _, key := range []string{"", "dispute-down"} {
		t.Run("key "+key, func(t *testing.T) {
			st := e.purchase(companyID, cardID, "5")
			path := "/cards/transactions/" + st.ID + "/disputes"
			var headers []string
			if key != "" {
				headers = []string{idempotency.Header, key}
			}
			r := e.Call(down, token, "POST", path, disputeBody, headers...)
			if r.Status != 502 || r.Str("code") != "CARD_ISSUER_UNAVAILABLE" || r.Str("data", "status") != "OPENING" ||
				r.Str("data", "issuer_dispute_id") != "<nil>" {
				t.Fatalf("the issuer down: %d %s", r.Status, r.Raw)
			}
			again := e.Call(e.Cards, token, "POST", path, disputeBody, headers...)
			if again.Status != 201 || again.Str("data", "id") != r.Str("data", "id") || again.Str("data", "status") != "SUBMITTED" {
				t.Fatalf("asked again: %d %s", again.Status, again.Raw)
			}
		})
	}
	if got := e.eventCount(token, "card.dispute.created"); got != 2 {
		t.Errorf("%d card.dispute.created, want 2", got)
	}
	e.VerifyCards(companyID)
}

// TestDisputeWithoutDisputes: a deployment without a card issuer refuses
// disputes (ErrNoIssuer), and one whose issuer takes none too
// (ErrNoDisputes), before anything is read or recorded.
func TestDisputeWithoutDisputes(t *testing.T) {
	t.Parallel()
	balances, err := wallets.NewBalances(moneystore.NewWallets(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		iss  issuer.Issuer
		want error
	}{{issuer.None, cards.ErrNoIssuer}, {issuer.Reported, cards.ErrNoDisputes}} {
		svc, err := cards.NewService(cards.Deps{
			Store: moneystore.NewCards(nil), Customers: noCustomers{}, Wallets: balances, Companies: noSlots{},
			Fees: fees.NewService(store.NewFees(nil)), Issuer: tt.iss, Vault: noSealer{}, Events: noEvents{},
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.OpenDispute(context.Background(), "co", "0196d1e2-0000-7000-8000-0000000d1501",
			cards.DisputeInput{Reason: issuer.DisputeOther, Explanation: "x"})
		if !errors.Is(err, tt.want) {
			t.Errorf("err = %v, want %v", err, tt.want)
		}
	}
}
