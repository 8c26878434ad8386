package cards_test

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"testing"
	"time"

	awsevents "github.com/aws/aws-lambda-go/events"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/function/sweeper"
	"payments/pkg/providers/issuer"
	"payments/pkg/store/moneystore"
)

// finishTerminations runs the sweeper, its clock two minutes ahead, until
// its card_terminations step releases nothing more, and returns how many
// holds it released in all.
func (e *networkEnv) finishTerminations() int {
	e.T.Helper()
	sweep := apptest.MustSweeper(e.T, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return time.Now().Add(2 * time.Minute) })
	total := 0
	for range 50 {
		resp, err := sweep(context.Background(), awsevents.EventBridgeEvent{})
		if err != nil {
			e.T.Fatalf("sweep: %v", err)
		}
		n := resp.(sweeper.Report)["card_terminations"].Done
		if n == 0 {
			return total
		}
		total += n
	}
	e.T.Fatalf("the sweeper still releases holds after 50 sweeps (%d released)", total)
	return total
}

// cutStore is a store whose context is cancelled once it has written
// after records: a sweep cut short by its deadline.
type cutStore struct {
	cards.Store
	mu      sync.Mutex
	after   int
	written int
	cancel  context.CancelFunc
}

func (c *cutStore) Record(ctx context.Context, r cards.Record) error {
	err := c.Store.Record(ctx, r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		if c.written++; c.written == c.after {
			c.cancel()
		}
	}
	return err
}

// pageHookStore runs hook once, after the first page of a card's holds
// is read.
type pageHookStore struct {
	cards.Store
	once sync.Once
	hook func()
}

func (h *pageHookStore) HoldsAfter(ctx context.Context, companyID, cardID, after string, limit int) ([]cards.Transaction, string, error) {
	holds, next, err := h.Store.HoldsAfter(ctx, companyID, cardID, after, limit)
	h.once.Do(h.hook)
	return holds, next, err
}

// customerOf returns the customer of card id of the company.
func (e *networkEnv) customerOf(companyID, id string) string {
	e.T.Helper()
	c, err := moneystore.NewCards(e.DB).Card(context.Background(), companyID, id)
	if err != nil {
		e.T.Fatal(err)
	}
	return c.CustomerID
}

// cardTerminated returns the data of the company's card.terminated event
// about card id.
func (e *networkEnv) cardTerminated(token, id string) map[string]any {
	e.T.Helper()
	for _, it := range e.Call(e.Webhooks, token, "GET", "/webhooks/events?limit=100&event=card.terminated", "").Items() {
		if p, _ := it.(map[string]any)["payload"].(map[string]any); p["cardId"] == id {
			return p
		}
	}
	e.T.Fatalf("no card.terminated about card %s", id)
	return nil
}

// TestTerminationOfManyHolds: a card with 1,000 open holds is terminated
// by one request whose AWS calls are those of a card without holds (one
// TransactWriteItems): the card is TERMINATED at once with what the holds
// keep, the rest refunded (refund_processed false, card.terminated says
// so), and a retry refunds nothing more. The sweeper then releases the
// holds, each a REVERSAL whose money goes to the wallet: a sweep cut short
// leaves the rest to the next, which finds the card again; at the end the
// card keeps nothing, the wallet has exactly the card's balance, and the
// invariants hold at every step.
func TestTerminationOfManyHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("needs DynamoDB Local: 1000 holds outrun the sweep's deadline on the in-memory one, whose queries read the whole index: make test")
	}
	e := newNetworkEnv(t)
	companyID, token, walletID, cardID := e.fundedCard(50, 6)
	r := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+e.customerOf(companyID, cardID)+`","amount":5}`)
	if r.Status != 201 {
		t.Fatalf("issue a second card: %s", r.Raw)
	}
	bare := r.Str("data", "id") // 5.00, no hold; the wallet is empty
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	holds := e.OpenHolds(companyID, cardID, 1000, 2) // 20.00 held of 50.00
	e.VerifyCards(companyID)

	// The request makes the AWS calls a termination of a card without
	// holds makes, in the same warm function: one TransactWriteItems.
	counter := &apptest.RequestCounter{}
	h := e.CardsFunction(t, counter.Counting(e.Cfg))
	terminate := func(id string) (apptest.Result, map[string]int) {
		t.Helper()
		counter.Take()
		r := e.Call(h, token, "POST", "/cards/"+id+"/terminate", `{"reason":"lost"}`)
		ops, _ := counter.Take()
		return r, ops
	}
	if r := e.Call(h, token, "GET", "/cards/"+bare+"?sync=false", ""); r.Status != 200 {
		t.Fatalf("warm the function: %s", r.Raw)
	}
	r, bareOps := terminate(bare)
	if r.Status != 200 || r.Str("data", "refund_amount") != "5" || r.Str("data", "refund_processed") != "true" ||
		r.Str("data", "held_amount") != "0" {
		t.Fatalf("terminate the card without holds: %s", r.Raw)
	}
	r, ops := terminate(cardID)
	if r.Status != 200 || r.Str("data", "refund_amount") != "30" || r.Str("data", "refund_processed") != "false" ||
		r.Str("data", "held_amount") != "20" || r.Str("data", "card_status") != "TERMINATED" {
		t.Fatalf("terminate: %d %s", r.Status, r.Raw)
	}
	if !maps.Equal(ops, bareOps) {
		t.Errorf("the termination of 1,000 holds made the requests %v, one without holds %v", ops, bareOps)
	}
	if ops["TransactWriteItems TABLE_NAME"] != 1 {
		t.Errorf("the termination wrote %d transactions, want 1: %v", ops["TransactWriteItems TABLE_NAME"], ops)
	}
	if r := e.Call(e.Cards, token, "GET", "/cards/"+cardID+"?sync=false", ""); r.Str("data", "status") != "TERMINATED" ||
		r.Str("data", "balance") != "20" || r.Str("data", "available_balance") != "0" {
		t.Errorf("the card after the termination: %s", r.Raw)
	}
	if got := e.Payout(token, walletID); got != "35" {
		t.Errorf("payout_balance %s after the terminations, want 35 (5 + 30)", got)
	}
	if ev := e.cardTerminated(token, cardID); fmt.Sprint(ev["refundAmount"]) != "30" || ev["refundProcessed"] != false || ev["reason"] != "lost" {
		t.Errorf("card.terminated %v", ev)
	}
	if ev := e.cardTerminated(token, bare); fmt.Sprint(ev["refundAmount"]) != "5" || ev["refundProcessed"] != true {
		t.Errorf("card.terminated of the card without holds %v", ev)
	}
	e.VerifyCards(companyID)
	if r := e.Call(e.Cards, token, "POST", "/cards/"+cardID+"/terminate", ""); r.Status != 400 || r.Str("code") != "CARD_TERMINATED" {
		t.Errorf("terminating again: %d %s", r.Status, r.Raw)
	}

	// A sweep cut short after 150 releases: their money is in the wallet,
	// the rest still on the card.
	svc, err := testCards(e.Cfg, e.DB)
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cut := *svc
	cut.Store = &cutStore{Store: svc.Store, after: 150, cancel: cancel}
	if n, err := cut.FinishTermination(cctx, companyID, cardID); n != 150 || err != nil {
		t.Fatalf("the cut sweep released %d, %v; want 150", n, err)
	}
	if c, _ := cs.Card(ctx, companyID, cardID); c.Balance != 1700 || c.Held != 1700 {
		t.Errorf("after the cut sweep: balance %d, held %d; want 1700, 1700", c.Balance, c.Held)
	}
	if got := e.Payout(token, walletID); got != "38" {
		t.Errorf("payout_balance %s after the cut sweep, want 38", got)
	}
	e.VerifyCards(companyID)

	// The sweeper finds the card again and finishes.
	if n := e.finishTerminations(); n != 850 {
		t.Errorf("the sweeper released %d holds, want 850", n)
	}
	if c, _ := cs.Card(ctx, companyID, cardID); c.Status != cards.Terminated || c.Balance != 0 || c.Held != 0 {
		t.Errorf("after the sweeps: %+v", c)
	}
	if got := e.Payout(token, walletID); got != "55" {
		t.Errorf("payout_balance %s at the end, want 55", got)
	}
	txs, err := cs.Transactions(ctx, companyID)
	if err != nil {
		t.Fatal(err)
	}
	reversals, open := 0, 0
	for _, tx := range txs {
		switch {
		case tx.Type == cards.TxReversal && tx.CardDelta == -2 && tx.WalletDelta == 2 && tx.WalletID == walletID:
			reversals++
		case tx.Type == cards.TxReversal:
			t.Errorf("reversal %+v", tx)
		case tx.Hold > 0:
			open++
		}
	}
	if reversals != len(holds) || open != 0 {
		t.Errorf("%d reversals to the wallet, %d holds open; want %d, 0", reversals, open, len(holds))
	}
	if n := e.eventCount(token, "transaction.reversal.completed"); n != len(holds) {
		t.Errorf("%d transaction.reversal.completed, want %d", n, len(holds))
	}
	if due, err := cs.Terminating(ctx, time.Now().Add(time.Hour), 100); err != nil || len(due) != 0 {
		t.Errorf("Terminating = %v, %v; want none", due, err)
	}
	if n := e.finishTerminations(); n != 0 {
		t.Errorf("a sweep afterwards released %d", n)
	}
	e.VerifyCards(companyID)
}

// TestTerminationReplayed: a termination sent again with its
// Idempotency-Key gets its first answer and refunds nothing more; with
// another key, or none, it is refused (CARD_TERMINATED). The holds the
// termination left are released once.
func TestTerminationReplayed(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, walletID, cardID := e.fundedCard(10, 0)
	e.OpenHolds(companyID, cardID, 3, 100)
	first := e.Call(e.Cards, token, "POST", "/cards/"+cardID+"/terminate", "", "Idempotency-Key", "end-1")
	if first.Status != 200 || first.Str("data", "refund_amount") != "7" || first.Str("data", "held_amount") != "3" {
		t.Fatalf("terminate: %s", first.Raw)
	}
	again := e.Call(e.Cards, token, "POST", "/cards/"+cardID+"/terminate", "", "Idempotency-Key", "end-1")
	if again.Status != 200 || again.Raw != first.Raw || again.Headers["Idempotent-Replayed"] != "true" {
		t.Errorf("replayed: %d %v %s", again.Status, again.Headers, again.Raw)
	}
	for _, key := range []string{"end-2", ""} {
		var headers []string
		if key != "" {
			headers = []string{"Idempotency-Key", key}
		}
		if r := e.Call(e.Cards, token, "POST", "/cards/"+cardID+"/terminate", "", headers...); r.Status != 400 || r.Str("code") != "CARD_TERMINATED" {
			t.Errorf("terminating again with key %q: %d %s", key, r.Status, r.Raw)
		}
	}
	if got := e.Payout(token, walletID); got != "7" {
		t.Errorf("payout_balance %s, want 7", got)
	}
	if n := e.finishTerminations(); n != 3 {
		t.Errorf("the sweeper released %d, want 3", n)
	}
	if got := e.Payout(token, walletID); got != "10" {
		t.Errorf("payout_balance %s after the sweep, want 10", got)
	}
	e.VerifyCards(companyID)
}

// TestTerminationRacesTheNetwork: against DynamoDB Local, a settlement of
// 0.60 of one of a terminated card's holds of 1.00 and the sweeper's
// release of it release the hold once, by one of them, and the settlement
// is paid either way (the issuer's word): either it comes first (the card
// pays 0.60, the 0.40 left of the hold goes to the wallet, and the
// sweeper leaves that hold alone), or the release does (the whole hold to
// the wallet) and the settlement is paid by the wallet. Each way round is
// forced (the other's write between one's read and its write), as is a
// settlement read before the termination and written after it (its rest
// goes to the wallet too: no money stays on a terminated card); then the
// sweeper and the card-worker race freely, several times. The card ends
// keeping nothing and the wallet holds the card's balance less what was
// settled.
func TestTerminationRacesTheNetwork(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	ctx := context.Background()
	cs := moneystore.NewCards(e.DB)
	svc, err := testCards(e.Cfg, e.DB)
	if err != nil {
		t.Fatal(err)
	}
	capture, _, last := e.capture()
	apply := func(t *testing.T, s *cards.Service, body []byte) {
		t.Helper()
		n, err := issuer.ParseNotification(body)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(ctx, n); err != nil {
			t.Fatalf("apply: %v", err)
		}
	}
	finish := func(t *testing.T, s *cards.Service, companyID, cardID string) {
		t.Helper()
		if _, err := s.FinishTermination(ctx, companyID, cardID); err != nil {
			t.Fatalf("finish the termination: %v", err)
		}
	}
	terminate := func(t *testing.T, companyID, cardID string) {
		t.Helper()
		if _, _, err := svc.Terminate(ctx, companyID, cardID, cards.TerminateInput{}); err != nil {
			t.Fatalf("terminate: %v", err)
		}
	}
	// Each race starts from a card of 10.00 with three holds of 1.00 and
	// the network's settlement of 0.60 of the first, body.
	races := []struct {
		name string
		// terminated: the card is terminated before run.
		terminated bool
		run        func(t *testing.T, companyID, cardID string, body []byte)
		// winner is who must win: "sweeper", "network", or "" (either).
		winner string
	}{
		{"the settlement writes between the sweeper's read and its write", true, func(t *testing.T, companyID, cardID string, body []byte) {
			s := *svc
			s.Store = &pageHookStore{Store: svc.Store, hook: func() { apply(t, svc, body) }}
			finish(t, &s, companyID, cardID)
		}, "network"},
		{"the sweeper writes between the settlement's read and its write", true, func(t *testing.T, companyID, cardID string, body []byte) {
			s := *svc
			s.Store = &hookStore{Store: svc.Store, hook: func() { finish(t, svc, companyID, cardID) }}
			apply(t, &s, body)
		}, "sweeper"},
		{"the termination writes between the settlement's read and its write", false, func(t *testing.T, companyID, cardID string, body []byte) {
			s := *svc
			s.Store = &hookStore{Store: svc.Store, hook: func() { terminate(t, companyID, cardID) }}
			apply(t, &s, body)
		}, "network"},
		{"the sweeper and the card-worker at once", true, func(t *testing.T, companyID, cardID string, body []byte) {
			ready := make(chan struct{})
			errs := make([]error, 2)
			var wg sync.WaitGroup
			wg.Go(func() {
				<-ready
				_, errs[0] = svc.FinishTermination(ctx, companyID, cardID)
			})
			wg.Go(func() {
				<-ready
				errs[1] = e.deliver(ctx, body)
			})
			close(ready)
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
		}, ""},
	}
	for _, r := range races {
		rounds := 1
		if r.winner == "" {
			rounds = 4
		}
		for round := range rounds {
			t.Run(fmt.Sprintf("%s/%d", r.name, round), func(t *testing.T) {
				companyID, token, walletID, cardID := e.fundedCard(10, 0)
				holds := e.OpenHolds(companyID, cardID, 3, 100)
				card, err := cs.Card(ctx, companyID, cardID)
				if err != nil {
					t.Fatal(err)
				}
				if r.terminated {
					terminate(t, companyID, cardID)
				}
				event, err := capture.Follow(ctx, "", issuer.NotifySettlement, card.IssuerCardID, cardID, issuer.NetworkTransaction{AuthorizationID: holds[0].IssuerTxID, Amount: 60, Close: true}, "")
				if err != nil {
					t.Fatal(err)
				}
				r.run(t, companyID, cardID, last())
				released := e.finishTerminations()
				o, found, err := cs.Outcome(ctx, companyID, claimOf(event))
				if err != nil || !found {
					t.Fatalf("the settlement's outcome: %v, %v", found, err)
				}
				a, err := cs.Transaction(ctx, companyID, holds[0].ID)
				if err != nil {
					t.Fatal(err)
				}
				if o.Refused != "" || a.Settled != 60 {
					t.Fatalf("the settlement's outcome %+v, the authorization %+v; want it settled", o, a)
				}
				st, err := cs.Transaction(ctx, companyID, o.TxID)
				if err != nil || st.Type != cards.TxSettlement {
					t.Fatalf("the settlement %+v, %v", st, err)
				}
				winner, want := "", "9.4"
				switch {
				case st.CardDelta == -100 && st.WalletDelta == 40:
					winner = "network" // 1.00 from the card, 0.40 of it to the wallet
				case st.CardDelta == 0 && st.WalletDelta == -60:
					winner = "sweeper" // the hold released first: the wallet pays
				default:
					t.Errorf("the settlement %+v: neither paid from the hold nor by the wallet", st)
				}
				if r.winner != "" && winner != r.winner {
					t.Errorf("%s won, want %s", winner, r.winner)
				}
				if c, _ := cs.Card(ctx, companyID, cardID); c.Status != cards.Terminated || c.Balance != 0 || c.Held != 0 {
					t.Errorf("the card at the end: %+v", c)
				}
				if got := e.Payout(token, walletID); got != want {
					t.Errorf("payout_balance %s, want %s (%s won; the sweeper's last run released %d)", got, want, winner, released)
				}
				e.VerifyCards(companyID)
			})
		}
	}
}
