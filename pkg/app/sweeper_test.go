package app

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/pkg/function"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/sweeper"
	"payments/pkg/function/walletsapi"
	"payments/pkg/store"
	"payments/pkg/waittest"
)

// TestSweeperResumesAndNeverExpires: a payout the operator never finishes
// (a number ending in 999) whose poll message is lost is resumed by the
// sweeper function, even long past its deadline, and neither the sweeper
// nor the resumed poll fails it or releases its funds.
func TestSweeperResumesAndNeverExpires(t *testing.T) {
	e := newPaymentsTestEnv(t)
	companyID, token, walletID := e.company("1000")
	r := e.call(e.payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000999","amount":100,"currency":"XAF"}`)
	if r.status != 200 {
		t.Fatalf("payout: %s", r.raw)
	}
	id := r.str("data", "transaction_id")
	e.pump(20*time.Second, func() bool { return e.status(token, id).str("data", "status") == "PROCESSING" })
	if _, err := e.sqs.PurgeQueue(context.Background(), &sqs.PurgeQueueInput{QueueUrl: aws.String(e.payouts)}); err != nil {
		t.Fatal(err) // the poll is lost
	}
	payments := store.NewPayments(e.db)
	before, err := payments.GetPayment(context.Background(), companyID, id)
	if err != nil {
		t.Fatal(err)
	}

	sweep := mustSweeper(t, recording(e.cfg, "sweeper"), func() time.Time { return time.Now().Add(16 * time.Minute) })
	if _, err := sweep(context.Background(), events.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	e.pump(20*time.Second, func() bool {
		p, err := payments.GetPayment(context.Background(), companyID, id)
		return err == nil && p.NextPollAt.After(before.NextPollAt)
	})
	if s := e.status(token, id); s.str("data", "status") != "PROCESSING" || s.str("data", "error_message") != "<nil>" {
		t.Fatalf("after the sweep: %s", s.raw)
	}
	if w := e.wallet(token, walletID); w["payout_reserved"] != json.Number("102") {
		t.Fatalf("wallet %v: the funds must stay reserved", w)
	}
	e.verify(companyID)
}

// mustSweeper builds the sweeper on cfg and the clock now.
func mustSweeper(t *testing.T, cfg function.Config, now func() time.Time) function.ScheduleHandler {
	t.Helper()
	h, err := sweeper.NewWithClock(cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestSweeperFinishesEachKindOfWork drops the message, or the answer, that
// carries each kind of asynchronous work on, and proves the sweeper
// function finishes it within two runs: a payout whose submit message was
// never sent, a transfer's event never published, a card funding the issuer
// did not answer, and a declared funding whose bank message was lost.
func TestSweeperFinishesEachKindOfWork(t *testing.T) {
	e := newCardsTestEnv(t)
	ctx := context.Background()
	isSend := func(in any) bool { _, ok := in.(*sqs.SendMessageInput); return ok }
	noQueues := failing(e.cfg, isSend)
	payments, err := paymentsapi.New(ctx, recording(noQueues, "payments"))
	if err != nil {
		t.Fatal(err)
	}
	wallets, err := walletsapi.New(ctx, recording(noQueues, "wallets"))
	if err != nil {
		t.Fatal(err)
	}
	companyID, token, usd, customer := e.cardCompany("100", "SWEEP01")
	xaf := e.openWallet(token, "XAF", "Cameroon", "CM", "+237")
	e.fundPayin(xaf, "5000")
	e.admin("POST", "/admin/wallets/"+xaf+"/credit", `{"balance":"payout","amount":5000,"reference":"sweep-payout"}`)
	card := e.call(e.cards, token, "POST", "/cards", `{"customer_id":"`+customer+`","amount":10}`).str("data", "id")
	outbox := store.NewOutbox(e.db)

	tests := []struct {
		name string
		// start leaves the work unfinished; done says whether it is
		// finished now.
		start func(t *testing.T) (done func() bool)
	}{
		{"payout whose submit message was never sent", func(t *testing.T) func() bool {
			r := e.call(payments, token, "POST", "/payment/payout", payoutBody(100))
			if r.status != 200 {
				t.Fatalf("payout: %s", r.raw)
			}
			id := r.str("data", "transaction_id")
			return func() bool {
				e.deliver() // the worker runs what the sweeper resent
				return e.status(token, id).str("data", "status") == "SUCCESS"
			}
		}},
		{"transfer whose event was never published", func(t *testing.T) func() bool {
			r := e.call(wallets, token, "POST", "/wallets/"+xaf+"/transfer-internal", `{"amount":1000}`)
			if r.status != 200 {
				t.Fatalf("transfer: %s", r.raw)
			}
			return func() bool {
				left, err := outbox.Unpublished(ctx, time.Now().Add(time.Hour), 10)
				return err == nil && len(left) == 0
			}
		}},
		{"card funding the issuer did not answer", func(t *testing.T) func() bool {
			if r := e.call(e.issuerDown(t), token, "POST", "/cards/"+card+"/fund", `{"amount":5}`); r.status != 502 {
				t.Fatalf("fund with the issuer down: %d %s", r.status, r.raw)
			}
			return func() bool { return e.call(e.cards, token, "GET", "/cards/"+card, "").str("data", "balance") == "15" }
		}},
		{"declared funding whose bank message was lost", func(t *testing.T) func() bool {
			r := e.call(wallets, token, "POST", "/wallets/fund", `{"wallet_id":"`+usd+`","amount":40,"reference":"sweep-funding"}`)
			if r.status != 202 || r.str("data", "status") != "PENDING" {
				t.Fatalf("fund: %d %s", r.status, r.raw)
			}
			id := r.str("data", "id")
			return func() bool {
				return e.call(e.wallets, token, "GET", "/wallet/transactions/"+id, "").str("data", "status") == "SUCCESS"
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done := tt.start(t)
			if done() {
				t.Fatal("finished before any sweep: nothing was dropped")
			}
			at := time.Now()
			for run := 1; ; run++ {
				at = at.Add(2 * time.Minute) // past every grace of the sweeper
				sweep := mustSweeper(t, recording(e.cfg, "sweeper"), func() time.Time { return at })
				report, err := sweep(ctx, events.EventBridgeEvent{})
				if err != nil {
					t.Fatalf("sweep %d: %v (%v)", run, err, report)
				}
				finished := false
				waittest.Until(t, 20*time.Second, "the swept work settles", func() bool {
					finished = done()
					return finished || run < 2 // after the first run, look once
				})
				if finished {
					return
				}
				if run == 2 {
					t.Fatalf("not finished after two sweeper runs: %v", report)
				}
			}
		})
	}
	e.verifyCards(companyID)
}
