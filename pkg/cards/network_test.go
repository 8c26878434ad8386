package cards_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	awsevents "github.com/aws/aws-lambda-go/events"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/function/sweeper"
	"payments/pkg/money"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuerdb"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/store/moneystore"
	"payments/pkg/waittest"
)

// TestConcurrentAuthorizations: 200 authorizations of 1 USD at once, each
// asked of us by the network with a signed request, on a card with 50
// available: exactly 50 approved, 150 declined, each answered in the
// request, each decline's fee taken card → wallet → debt as the balances
// allow; once the card-worker has applied the network's advices, the
// issuer's card ends as ours.
func TestConcurrentAuthorizations(t *testing.T) {
	if testing.Short() {
		t.Skip("needs DynamoDB Local: too slow on the in-memory one, which serves one request at a time (tens of seconds of contended writes): make test")
	}
	e := newNetworkEnv(t)
	companyID, token, walletID, cardID := e.fundedCard(50, 40)
	ctx := context.Background()
	c, err := moneystore.NewCards(e.DB).Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	// DynamoDB Local writes about 130 transactions a second on the
	// machines this runs on (docs/performance.md): 200 decisions at once on
	// one card take seconds, past the network's 2 s, and it would decline
	// the last ones on its own (TestStandIn). This network waits for them.
	e.sandbox.Network.(*issuersandbox.Network).Deadline = time.Minute
	answers := make([]issuer.AuthorizationAnswer, 200)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			a, err := e.sandbox.Network.Authorize(ctx, "", c.IssuerCardID, cardID, issuer.KindAuthorization, 100,
				issuer.Merchant{Name: "Corner Shop", City: "Austin", Country: "US"})
			if err != nil || a.StandIn {
				t.Errorf("authorization %d: %+v, %v", i, a, err)
			}
			answers[i] = a.Answer
		})
	}
	wg.Wait()
	cs := moneystore.NewCards(e.DB)
	decisions := map[string]string{} // by transaction id
	for _, a := range answers {
		if a.TransactionID != nil {
			decisions[*a.TransactionID] = a.Decision
		}
	}
	if len(decisions) != len(answers) {
		t.Fatalf("%d answers name a transaction of their own, want %d", len(decisions), len(answers))
	}
	var approved, declined int
	for id, decision := range decisions {
		tx, err := cs.Transaction(ctx, companyID, id)
		switch {
		case err != nil:
			t.Fatal(err)
		case tx.Type == cards.TxAuthorization && tx.Status == cards.TxPending && decision == issuer.Approved:
			approved++
		case tx.Type == cards.TxDecline && tx.DeclineReason == cards.DeclineInsufficient && decision == issuer.Declined:
			declined++
		default:
			t.Errorf("transaction %+v", tx)
		}
	}
	if approved != 50 || declined != 150 {
		t.Fatalf("%d approved, %d declined; want 50 and 150", approved, declined)
	}
	card, err := cs.Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	if card.Balance != 5000 || card.Held != 5000 {
		t.Errorf("card balance %d, held %d; want 5000 and 5000", card.Balance, card.Held)
	}
	// The card-workers told the issuer of each hold and fee, each once.
	waittest.Until(t, time.Minute, "the issuer's card has the balance and holds ours has", func() bool {
		ic, err := e.sandbox.Cards.Issuer.Card(ctx, card.IssuerCardID)
		return err == nil && ic.Balance == card.Balance && ic.Available == card.Available()
	})
	// 150 fees of 0.50: the wallet's 40.00 pays 80 of them, 70 are debts.
	if got := e.Payout(token, walletID); got != "0" {
		t.Errorf("wallet payout_balance %s, want 0", got)
	}
	for kind, want := range map[string]int{
		"transaction.authorization.created": 50, "transaction.authorization.declined": 150,
		"fee.payment_failure.charged": 150, "debt.recovery.pending": 70,
	} {
		if got := e.eventCount(token, kind); got != want {
			t.Errorf("%d %s events, want %d", got, kind, want)
		}
	}
	e.VerifyCards(companyID)
}

func TestCardNetworkLifecycle(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, walletID, cardID := e.fundedCard(200, 10)
	ctx := context.Background()
	sb := e.sandbox
	auth := func(amount, country, kind string) cards.Transaction {
		t.Helper()
		tx, err := sb.Authorize(ctx, companyID, cardID, cards.AuthorizeInput{Amount: []byte(amount),
			MerchantName: "Book Shop", MerchantCity: "Lyon", MerchantCountry: country, Type: kind})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	card := func() cards.Card {
		t.Helper()
		c, err := moneystore.NewCards(e.DB).Card(ctx, companyID, cardID)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	// A purchase abroad: 100.00 held, settled, then 3.00 of cross-border
	// fee (2.5 % + 0.50) from the card.
	abroad := auth("100", "FR", "")
	if abroad.Status != cards.TxPending || abroad.Hold != 10000 || card().Available() != 10000 {
		t.Fatalf("authorization %+v, card %+v", abroad, card())
	}
	settled, err := sb.Follow(ctx, companyID, abroad.ID, cards.TxSettlement, cards.FollowInput{})
	if err != nil {
		t.Fatal(err)
	}
	if settled.Type != cards.TxSettlement || settled.Amount != 10000 || settled.OriginalID != abroad.ID {
		t.Fatalf("settlement %+v", settled)
	}
	if c := card(); c.Balance != 20000-10000-300 || c.Held != 0 {
		t.Fatalf("card after a settlement abroad: balance %d, held %d; want 9700, 0", c.Balance, c.Held)
	}

	// Illegal moves change nothing.
	for _, c := range []struct {
		typ    cards.TxType
		id     string
		amount string
		want   error
	}{
		{cards.TxSettlement, abroad.ID, "", cards.ErrAlreadySettled},
		{cards.TxReversal, abroad.ID, "", cards.ErrAlreadySettled},
		{cards.TxRefund, abroad.ID, "100.01", cards.ErrExceedsSettled},
		{cards.TxSettlement, settled.ID, "", cards.ErrNotAuthorization},
	} {
		if _, err := sb.Follow(ctx, companyID, c.id, c.typ, cards.FollowInput{Amount: []byte(c.amount)}); !errors.Is(err, c.want) {
			t.Errorf("%s of %s: %v, want %v", c.typ, c.id, err, c.want)
		}
	}

	// A partial refund, then the rest; a third is refused.
	for _, amount := range []string{"40", ""} {
		if _, err := sb.Follow(ctx, companyID, abroad.ID, cards.TxRefund, cards.FollowInput{Amount: []byte(amount)}); err != nil {
			t.Fatal(err)
		}
	}
	if c := card(); c.Balance != 19700 {
		t.Errorf("card after refunds: balance %d, want 19700", c.Balance)
	}
	if _, err := sb.Follow(ctx, companyID, abroad.ID, cards.TxRefund, cards.FollowInput{}); !errors.Is(err, cards.ErrExceedsSettled) {
		t.Errorf("a third refund: %v", err)
	}

	// A pre-authorization settled for less releases the whole hold; a
	// reversed one cannot be settled.
	pre := auth("50", "US", "PREAUTHORIZATION")
	if _, err := sb.Follow(ctx, companyID, pre.ID, cards.TxSettlement, cards.FollowInput{Amount: []byte("30.25")}); err != nil {
		t.Fatal(err)
	}
	if c := card(); c.Balance != 19700-3025 || c.Held != 0 {
		t.Errorf("card after a partial settlement at home: balance %d, held %d", c.Balance, c.Held)
	}
	reversed := auth("20", "US", "")
	if _, err := sb.Follow(ctx, companyID, reversed.ID, cards.TxReversal, cards.FollowInput{}); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Follow(ctx, companyID, reversed.ID, cards.TxSettlement, cards.FollowInput{}); !errors.Is(err, cards.ErrAlreadyReversed) {
		t.Errorf("settling a reversed hold: %v", err)
	}
	if over := auth("10", "US", ""); true {
		if _, err := sb.Follow(ctx, companyID, over.ID, cards.TxReversal, cards.FollowInput{Amount: []byte("10.01")}); !errors.Is(err, cards.ErrExceedsHold) {
			t.Errorf("reversing more than the hold: %v", err)
		}
	}

	// A verification holds nothing; a frozen card declines, with the fee.
	if v := auth("", "US", "VERIFICATION"); v.Status != cards.TxSuccess || v.Hold != 0 {
		t.Errorf("verification %+v", v)
	}
	if r := e.Call(e.Cards, token, "PUT", "/cards/"+cardID+"/freeze", ""); r.Status != 200 {
		t.Fatalf("freeze: %s", r.Raw)
	}
	if d := auth("1", "US", ""); d.Type != cards.TxDecline || d.DeclineReason != cards.DeclineFrozen || d.Fee != 50 || d.CardDelta != -50 {
		t.Errorf("decline on a frozen card %+v", d)
	}

	// A termination refunds at once what no hold keeps; the open hold (the
	// 10.00) stays on the card until the sweeper releases it to the
	// wallet.
	before := card()
	if before.Held != 1000 {
		t.Fatalf("held before termination %d, want 1000", before.Held)
	}
	term, err := sb.Terminate(ctx, companyID, cardID, cards.TerminateInput{})
	if err != nil {
		t.Fatal(err)
	}
	if term.Type != cards.TxTermination || term.Amount != before.Balance-1000 {
		t.Errorf("termination %+v, balance before %d", term, before.Balance)
	}
	if c := card(); c.Status != cards.Terminated || c.Balance != 1000 || c.Held != 1000 {
		t.Errorf("card after termination: balance %d, held %d; want 1000, 1000", c.Balance, c.Held)
	}
	if n := e.finishTerminations(); n != 1 {
		t.Errorf("the sweeper released %d holds, want 1", n)
	}
	if c := card(); c.Status != cards.Terminated || c.Balance != 0 || c.Held != 0 {
		t.Errorf("card after the sweep %+v", c)
	}
	want := money.Format(10*100+before.Balance, "USD")
	if got := e.Payout(token, walletID); got != want {
		t.Errorf("wallet payout_balance %s, want %s", got, want)
	}
	e.VerifyCards(companyID)
}

func TestNotificationAppliedOnce(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, _, _, cardID := e.fundedCard(20, 0)
	ctx := context.Background()
	card, err := moneystore.NewCards(e.DB).Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	// The network's deliveries, captured to be delivered three times each:
	// the advice of an authorization it asked us, then a settlement.
	capture, bodies, _ := e.capture()
	if _, err := capture.Authorize(ctx, "", card.IssuerCardID, cardID, issuer.KindAuthorization, 500, issuer.Merchant{Name: "Cafe", City: "Douala", Country: "CM"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := e.deliver(ctx, bodies()[0]); err != nil {
			t.Fatal(err)
		}
	}
	auth, err := e.sandbox.Cards.Store.NetworkTransaction(ctx, companyID, issuerTxID(t, bodies()[0]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capture.Follow(ctx, "", issuer.NotifySettlement, card.IssuerCardID, cardID, issuer.NetworkTransaction{AuthorizationID: auth.IssuerTxID, Amount: 500, Close: true}, ""); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := e.deliver(ctx, bodies()[1]); err != nil {
			t.Fatal(err)
		}
	}
	// 20.00 − 5.00 − the cross-border fee of 0.63 (2.5 % of 5.00 = 0.125,
	// rounded half away from zero to 0.13, + 0.50), once.
	if c, _ := moneystore.NewCards(e.DB).Card(ctx, companyID, cardID); c.Balance != 2000-500-63 || c.Held != 0 {
		t.Errorf("card balance %d, held %d; want 1437, 0", c.Balance, c.Held)
	}
	e.VerifyCards(companyID)
}

// issuerTxID reads the network transaction id of a notification.
func issuerTxID(t *testing.T, body []byte) string {
	t.Helper()
	n, err := issuer.ParseNotification(body)
	if err != nil {
		t.Fatal(err)
	}
	return n.Transaction.ID
}

// TestRefusalCodes checks that each refusal of the card network is in the
// error catalogue under the code the card-worker records it with.
func TestRefusalCodes(t *testing.T) {
	t.Parallel()
	for _, err := range []error{cards.ErrNotAuthorization, cards.ErrAlreadySettled, cards.ErrAlreadyReversed,
		cards.ErrExceedsHold, cards.ErrNotSettled, cards.ErrExceedsSettled, cards.ErrTransactionNotFound, cards.ErrDuplicateNetworkTx} {
		code := cards.RefusalCode(err)
		if code == "" {
			t.Errorf("%v has no refusal code", err)
		}
		found := false
		for _, row := range cardshttp.Errors {
			if row.Err == err {
				found = true
				if row.Code != code {
					t.Errorf("%v: catalogue code %s, refusal code %s", err, row.Code, code)
				}
			}
		}
		if !found {
			t.Errorf("%v is not in the error catalogue", err)
		}
	}
}

// TestDebtsRecoveredOnce: fees a bare card and an empty wallet cannot pay
// become debts; each later credit to the USD wallet pays them, oldest
// first, once: a withdrawal (the cards function), a withdrawal the sweeper
// finishes, a refund to a terminated card (the card-worker); a console
// credit afterwards pays nothing more. The company's failed-payment fee is
// 1.00 here, so that each credit of 1.00 pays exactly one debt.
func TestDebtsRecoveredOnce(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, walletID, cardID := e.fundedCard(4, 0)
	if r := e.Admin("PUT", "/admin/companies/"+companyID+"/fees", `{"rules":[{"type":"CARD_PAYMENT_FAILURE","currency":"USD","fixed":1}]}`); r.Status != 200 {
		t.Fatalf("fees: %s", r.Raw)
	}
	ctx := context.Background()
	sb := e.sandbox
	buy := func(amount string) cards.Transaction {
		t.Helper()
		tx, err := sb.Authorize(ctx, companyID, cardID, cards.AuthorizeInput{Amount: []byte(amount), MerchantName: "Kiosk", MerchantCity: "Austin"})
		if err != nil {
			t.Fatal(err)
		}
		return tx
	}
	follow := func(typ cards.TxType, id, amount string) {
		t.Helper()
		if _, err := sb.Follow(ctx, companyID, id, typ, cards.FollowInput{Amount: []byte(amount)}); err != nil {
			t.Fatal(err)
		}
	}
	var declines []string
	recovered := func(want int) {
		t.Helper()
		r := e.Call(e.Wallets, token, "GET", "/debts?status=RECOVERED&limit=100", "")
		var got []string
		for _, it := range r.Items() {
			got = append(got, fmt.Sprint(it.(map[string]any)["transaction_id"]))
		}
		slices.Reverse(got) // newest first
		if !slices.Equal(got, declines[:want]) {
			t.Errorf("recovered debts of %v, want the oldest %d of %v", got, want, declines)
		}
		if p := e.Payout(token, walletID); p != "0" {
			t.Errorf("payout_balance %s, want 0: each credit paid a debt", p)
		}
	}
	paid := buy("2")
	follow(cards.TxSettlement, paid.ID, "")
	held := buy("2")
	for range 3 { // nothing available on the card, nothing in the wallet
		d := buy("5")
		if d.Type != cards.TxDecline || d.Debt != 100 {
			t.Fatalf("decline %+v", d)
		}
		declines = append(declines, d.ID)
	}
	follow(cards.TxReversal, held.ID, "")
	if r := e.Call(e.Cards, token, "POST", "/cards/"+cardID+"/withdraw", `{"amount":1}`); r.Status != 200 {
		t.Fatalf("withdraw: %s", r.Raw)
	}
	recovered(1)
	if r := e.Call(e.IssuerDown(t), token, "POST", "/cards/"+cardID+"/withdraw", `{"amount":1}`); r.Status != 502 {
		t.Fatalf("withdraw with the issuer down: %d %s", r.Status, r.Raw)
	}
	sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return time.Now().Add(2 * time.Minute) })
	if _, err := sweep(ctx, awsevents.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	recovered(2)
	if r := e.Call(e.Cards, token, "POST", "/cards/"+cardID+"/terminate", ""); r.Status != 200 {
		t.Fatalf("terminate: %s", r.Raw)
	}
	follow(cards.TxRefund, paid.ID, "1")
	recovered(3)
	if r := e.Admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":10,"reference":"after-debts"}`); r.Status != 200 {
		t.Fatalf("credit: %s", r.Raw)
	}
	if got := e.Payout(token, walletID); got != "10" {
		t.Errorf("payout_balance %s after a console credit, want 10", got)
	}
	if n := e.eventCount(token, "debt.recovered"); n != 3 {
		t.Errorf("%d debt.recovered events, want 3", n)
	}
	e.VerifyCards(companyID)
	e.CheckTimestamps(token)
}

// TestNotificationsOutOfOrder: a refund the queue hands over before the
// settlement it follows is credited at once (the issuer's word: its link
// to the authorization is never a condition), once, and the settlement
// that follows takes its amount; a settlement before its authorization is
// recorded fails, to be delivered again; the network's advice of an
// authorization, delivered again under another event id, holds nothing
// twice.
func TestNotificationsOutOfOrder(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, _, _, cardID := e.fundedCard(20, 0)
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	card, err := cs.Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	capture, bodies, _ := e.capture()
	a, err := capture.Authorize(ctx, "", card.IssuerCardID, cardID, issuer.KindAuthorization, 700, issuer.Merchant{Name: "Cafe", City: "Austin", Country: "US"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capture.Follow(ctx, "", issuer.NotifySettlement, card.IssuerCardID, cardID, issuer.NetworkTransaction{AuthorizationID: a.Request.ID, Amount: 700, Close: true}, ""); err != nil {
		t.Fatal(err)
	}
	refundEvent, err := capture.Follow(ctx, "", issuer.NotifyRefund, card.IssuerCardID, cardID, issuer.NetworkTransaction{AuthorizationID: a.Request.ID, Amount: 200}, "")
	if err != nil {
		t.Fatal(err)
	}
	advice, settlement, refund := bodies()[0], bodies()[1], bodies()[2]
	resp, err := e.worker(ctx, awsevents.SQSEvent{Records: []awsevents.SQSMessage{{MessageId: "early", Body: string(refund)}}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("a refund before its settlement: %+v, %v; want it applied", resp, err)
	}
	if o, found, _ := cs.Outcome(ctx, companyID, claimOf(refundEvent)); !found || o.BalanceDelta != 200 {
		t.Fatalf("the early refund: %+v, %v; want 200 credited", o, found)
	}
	// A settlement whose authorization is not recorded yet waits for it.
	early, err := capture.Follow(ctx, "", issuer.NotifySettlement, card.IssuerCardID, cardID, issuer.NetworkTransaction{AuthorizationID: "ntx_not_yet", Amount: 100, Close: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	resp, err = e.worker(ctx, awsevents.SQSEvent{Records: []awsevents.SQSMessage{{MessageId: "early-settlement", Body: string(bodies()[3])}}})
	if err != nil || len(resp.BatchItemFailures) != 1 {
		t.Fatalf("a settlement before its authorization: %+v, %v; want it failed, to be delivered again", resp, err)
	}
	if _, found, _ := cs.Outcome(ctx, companyID, claimOf(early)); found {
		t.Fatal("the early settlement was recorded")
	}
	for _, b := range [][]byte{advice, settlement, refund} {
		if err := e.deliver(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if c, _ := cs.Card(ctx, companyID, cardID); c.Balance != 1500 || c.Held != 0 {
		t.Errorf("card balance %d, held %d; want 1500, 0", c.Balance, c.Held)
	}
	again := strings.Replace(string(advice), a.Advice.ID, a.Advice.ID+"-again", 1)
	if err := e.deliver(ctx, []byte(again)); err != nil {
		t.Fatal(err)
	}
	if c, _ := cs.Card(ctx, companyID, cardID); c.Balance != 1500 || c.Held != 0 {
		t.Errorf("after the advice again: card balance %d, held %d; want 1500, 0", c.Balance, c.Held)
	}
	e.VerifyCards(companyID)
}

// TestNetworkDeliversAgain: a notification the network kept but whose
// delivery was lost (the queue emulator's messages die with make run) is
// delivered again by the sweeper's card_network step once due, applied by
// the card-worker and acknowledged: the next sweep delivers nothing.
func TestNetworkDeliversAgain(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, _, _, cardID := e.fundedCard(20, 0)
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	card, err := cs.Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := e.sandbox.Authorize(ctx, companyID, cardID, cards.AuthorizeInput{Amount: []byte("4"),
		MerchantName: "Hotel", MerchantCity: "Austin", MerchantCountry: "US"})
	if err != nil {
		t.Fatal(err)
	}
	lost, _, _ := e.capture() // keeps what it sends, delivers nothing
	lost.Notices = issuerdb.New(e.DB.DB)
	sent := time.Now()
	event, err := lost.Follow(ctx, "", issuer.NotifySettlement, card.IssuerCardID, cardID, issuer.NetworkTransaction{AuthorizationID: auth.IssuerTxID, Amount: 400, Close: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := apptest.Recording(e.Cfg, "sweeper")
	sweep := func(at time.Time) sweeper.Outcome {
		t.Helper()
		resp, err := apptest.MustSweeper(t, cfg, func() time.Time { return at })(ctx, awsevents.EventBridgeEvent{})
		if err != nil {
			t.Fatal(err)
		}
		return resp.(sweeper.Report)["card_network"]
	}
	if got := sweep(sent.Add(issuersandbox.RedeliverAfter)); got.Done < 1 {
		t.Fatalf("card_network %+v, want the settlement delivered again", got)
	}
	waittest.Until(t, 30*time.Second, "the settlement delivered again is applied", func() bool {
		_, found, err := cs.Outcome(ctx, companyID, claimOf(event))
		return err == nil && found
	})
	if c, _ := cs.Card(ctx, companyID, cardID); c.Balance != 1600 || c.Held != 0 {
		t.Errorf("card balance %d, held %d; want 1600, 0", c.Balance, c.Held)
	}
	waittest.Until(t, 30*time.Second, "the settlement acknowledged: nothing due again", func() bool {
		return sweep(sent.Add(24*time.Hour)).Done == 0
	})
	e.VerifyCards(companyID)
}
