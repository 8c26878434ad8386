package app

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/cards"
	"payments/pkg/money"
	"payments/pkg/providers/issuer"
	"payments/pkg/store"
)

// networkEnv is the cards environment with the card-network sandbox, its
// notifications applied by the card-worker.
type networkEnv struct {
	*cardsTestEnv
	sandbox *cards.Sandbox
	worker  SQSHandler
	sent    atomic.Int64
}

func newNetworkEnv(t *testing.T) *networkEnv {
	t.Helper()
	e := &networkEnv{cardsTestEnv: newCardsTestEnv(t)}
	worker, err := NewCardWorker(context.Background(), recording(e.cfg, "card-worker"))
	if err != nil {
		t.Fatal(err)
	}
	e.worker = worker
	svc, err := cardsService(e.cfg, e.db)
	if err != nil {
		t.Fatal(err)
	}
	e.sandbox = &cards.Sandbox{Cards: svc, Network: issuer.NewSandboxNetwork(e.deliver)}
	return e
}

// deliver hands a notification to the card-worker, again while it fails,
// as the queue would.
func (e *networkEnv) deliver(ctx context.Context, body []byte) error {
	id := fmt.Sprint(e.sent.Add(1))
	for attempt := 1; attempt <= 20; attempt++ {
		resp, err := e.worker(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: id, Body: string(body)}}})
		if err != nil {
			return err
		}
		if len(resp.BatchItemFailures) == 0 {
			return nil
		}
	}
	return fmt.Errorf("notification %s not applied after 20 deliveries", id)
}

// fundedCard issues a card holding usd to a new company whose USD wallet
// keeps wallet after the issuance (fee 1.00 USD).
func (e *networkEnv) fundedCard(usd, wallet int64) (companyID, token, walletID, cardID string) {
	e.t.Helper()
	companyID, token, walletID, customerID := e.cardCompany(fmt.Sprint(usd+wallet+1), fmt.Sprintf("CM-%d", e.sent.Add(1)))
	r := e.call(e.cards, token, "POST", "/cards", fmt.Sprintf(`{"customer_id":%q,"amount":%d}`, customerID, usd))
	if r.status != 201 {
		e.t.Fatalf("issue: %s", r.raw)
	}
	return companyID, token, walletID, r.str("data", "id")
}

func TestConcurrentAuthorizations(t *testing.T) {
	e := newNetworkEnv(t)
	companyID, token, walletID, cardID := e.fundedCard(50, 40)
	ctx := context.Background()
	var approved, declined atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			tx, err := e.sandbox.Authorize(ctx, companyID, cardID, cards.AuthorizeInput{
				Amount: []byte("1"), MerchantName: "Corner Shop", MerchantCity: "Austin"})
			switch {
			case err != nil:
				t.Error(err)
			case tx.Type == cards.TxAuthorization && tx.Status == cards.TxPending:
				approved.Add(1)
			case tx.Type == cards.TxDecline && tx.DeclineReason == cards.DeclineInsufficient:
				declined.Add(1)
			default:
				t.Errorf("transaction %+v", tx)
			}
		})
	}
	wg.Wait()
	if approved.Load() != 50 || declined.Load() != 150 {
		t.Fatalf("%d approved, %d declined; want 50 and 150", approved.Load(), declined.Load())
	}
	card, err := store.NewCards(e.db).Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	if card.Balance != 5000 || card.Held != 5000 {
		t.Errorf("card balance %d, held %d; want 5000 and 5000", card.Balance, card.Held)
	}
	// 150 fees of 0.50: the wallet's 40.00 pays 80 of them, 70 are debts.
	if got := e.payout(token, walletID); got != "0" {
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
	e.verifyCards(companyID)
}

// eventCount returns how many events of kind the company has.
func (e *networkEnv) eventCount(token, kind string) int {
	e.t.Helper()
	r := e.call(e.webhooks, token, "GET", "/webhooks/events?limit=1&event="+kind, "")
	if r.status != 200 {
		e.t.Fatalf("events: %s", r.raw)
	}
	n, err := strconv.Atoi(r.str("pagination", "total"))
	if err != nil {
		e.t.Fatalf("events total: %s", r.raw)
	}
	return n
}

func TestCardNetworkLifecycle(t *testing.T) {
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
		c, err := store.NewCards(e.db).Card(ctx, companyID, cardID)
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
		if _, err := sb.Follow(ctx, companyID, over.ID, cards.TxSettlement, cards.FollowInput{Amount: []byte("10.01")}); !errors.Is(err, cards.ErrExceedsHold) {
			t.Errorf("settling more than the hold: %v", err)
		}
	}

	// A verification holds nothing; a frozen card declines, with the fee.
	if v := auth("", "US", "VERIFICATION"); v.Status != cards.TxSuccess || v.Hold != 0 {
		t.Errorf("verification %+v", v)
	}
	if r := e.call(e.cards, token, "PUT", "/cards/"+cardID+"/freeze", ""); r.status != 200 {
		t.Fatalf("freeze: %s", r.raw)
	}
	if d := auth("1", "US", ""); d.Type != cards.TxDecline || d.DeclineReason != cards.DeclineFrozen || d.Fee != 50 || d.CardDelta != -50 {
		t.Errorf("decline on a frozen card %+v", d)
	}

	// A termination reverses the open hold (the 10.00) first, then refunds
	// the balance.
	before := card()
	if before.Held != 1000 {
		t.Fatalf("held before termination %d, want 1000", before.Held)
	}
	term, err := sb.Terminate(ctx, companyID, cardID, cards.TerminateInput{})
	if err != nil {
		t.Fatal(err)
	}
	if term.Type != cards.TxTermination || term.Amount != before.Balance {
		t.Errorf("termination %+v, balance before %d", term, before.Balance)
	}
	if c := card(); c.Status != cards.Terminated || c.Balance != 0 || c.Held != 0 {
		t.Errorf("card after termination %+v", c)
	}
	want := money.Format(10*100+before.Balance, "USD")
	if got := e.payout(token, walletID); got != want {
		t.Errorf("wallet payout_balance %s, want %s", got, want)
	}
	e.verifyCards(companyID)
}

func TestNotificationAppliedOnce(t *testing.T) {
	e := newNetworkEnv(t)
	companyID, _, _, cardID := e.fundedCard(20, 0)
	ctx := context.Background()
	card, err := store.NewCards(e.db).Card(ctx, companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	// The network's deliveries, captured to be delivered three times each.
	var bodies [][]byte
	capture := issuer.NewSandboxNetwork(func(_ context.Context, body []byte) error {
		bodies = append(bodies, body)
		return nil
	})
	if _, err := capture.Authorize(ctx, card.IssuerCardID, cardID, issuer.KindAuthorization, 500, issuer.Merchant{Name: "Cafe", City: "Douala", Country: "CM"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := e.deliver(ctx, bodies[0]); err != nil {
			t.Fatal(err)
		}
	}
	auth, err := e.sandbox.Cards.Store.NetworkTransaction(ctx, companyID, issuerTxID(t, bodies[0]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := capture.Follow(ctx, issuer.NotifySettlement, card.IssuerCardID, cardID, auth.IssuerTxID, 500); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := e.deliver(ctx, bodies[1]); err != nil {
			t.Fatal(err)
		}
	}
	// 20.00 − 5.00 − the cross-border fee of 0.63 (2.5 % of 5.00 = 0.125,
	// rounded half away from zero to 0.13, + 0.50), once.
	if c, _ := store.NewCards(e.db).Card(ctx, companyID, cardID); c.Balance != 2000-500-63 || c.Held != 0 {
		t.Errorf("card balance %d, held %d; want 1437, 0", c.Balance, c.Held)
	}
	e.verifyCards(companyID)
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
	for _, err := range []error{cards.ErrNotAuthorization, cards.ErrAlreadySettled, cards.ErrAlreadyReversed,
		cards.ErrExceedsHold, cards.ErrNotSettled, cards.ErrExceedsSettled, cards.ErrTransactionNotFound} {
		code := cards.RefusalCode(err)
		if code == "" {
			t.Errorf("%v has no refusal code", err)
		}
		found := false
		for _, row := range Errors {
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
