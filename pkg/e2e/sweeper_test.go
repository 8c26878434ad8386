package e2e_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/pkg/app/apptest"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/walletsapi"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/waittest"
)

// TestSweeperResumesAndNeverExpires: a payout the operator never finishes
// (a number ending in 999) whose poll message is lost is resumed by the
// sweeper function, even long past its deadline, and neither the sweeper
// nor the resumed poll fails it or releases its funds.
func TestSweeperResumesAndNeverExpires(t *testing.T) {
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, walletID := e.Company("1000")
	r := e.Call(e.Payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000999","amount":100,"currency":"XAF"}`)
	if r.Status != 200 {
		t.Fatalf("payout: %s", r.Raw)
	}
	id := r.Str("data", "transaction_id")
	e.Pump(20*time.Second, func() bool { return e.Status(token, id).Str("data", "status") == "PROCESSING" })
	if _, err := e.Sqs.PurgeQueue(context.Background(), &sqs.PurgeQueueInput{QueueUrl: aws.String(e.Payouts)}); err != nil {
		t.Fatal(err) // the poll is lost
	}
	payments := moneystore.NewPayments(e.DB)
	before, err := payments.GetPayment(context.Background(), companyID, id)
	if err != nil {
		t.Fatal(err)
	}

	sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return time.Now().Add(16 * time.Minute) })
	if _, err := sweep(context.Background(), events.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	e.Pump(20*time.Second, func() bool {
		p, err := payments.GetPayment(context.Background(), companyID, id)
		return err == nil && p.NextPollAt.After(before.NextPollAt)
	})
	if s := e.Status(token, id); s.Str("data", "status") != "PROCESSING" || s.Str("data", "error_message") != "<nil>" {
		t.Fatalf("after the sweep: %s", s.Raw)
	}
	if w := e.Wallet(token, walletID); w["payout_reserved"] != json.Number("102") {
		t.Fatalf("wallet %v: the funds must stay reserved", w)
	}
	e.Verify(companyID)
}

// TestSweeperFinishesEachKindOfWork drops the message, or the answer, that
// carries each kind of asynchronous work on, and proves the sweeper
// function finishes it within two runs: a payout whose submit message was
// never sent, a transfer's event never published, a card funding the issuer
// did not answer, the open hold a card's termination left, and a declared
// funding whose bank message was lost.
func TestSweeperFinishesEachKindOfWork(t *testing.T) {
	e := apptest.NewCardsTestEnv(t)
	ctx := context.Background()
	isSend := func(in any) bool { _, ok := in.(*sqs.SendMessageInput); return ok }
	noQueues := apptest.Failing(e.Cfg, isSend)
	payments, err := paymentsapi.New(ctx, apptest.Recording(noQueues, "payments"))
	if err != nil {
		t.Fatal(err)
	}
	wallets, err := walletsapi.New(ctx, apptest.Recording(noQueues, "wallets"))
	if err != nil {
		t.Fatal(err)
	}
	companyID, token, usd, customer := e.CardCompany("100", "SWEEP01")
	xaf := e.OpenWallet(token, "XAF", "Cameroon", "CM", "+237")
	e.FundPayin(xaf, "5000")
	e.Admin("POST", "/admin/wallets/"+xaf+"/credit", `{"balance":"payout","amount":5000,"reference":"sweep-payout"}`)
	card := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customer+`","amount":10}`).Str("data", "id")
	outbox := store.NewOutbox(e.DB)

	tests := []struct {
		name string
		// start leaves the work unfinished; done says whether it is
		// finished now.
		start func(t *testing.T) (done func() bool)
	}{
		{"payout whose submit message was never sent", func(t *testing.T) func() bool {
			r := e.Call(payments, token, "POST", "/payment/payout", payoutBody(100))
			if r.Status != 200 {
				t.Fatalf("payout: %s", r.Raw)
			}
			id := r.Str("data", "transaction_id")
			return func() bool {
				e.Deliver() // the worker runs what the sweeper resent
				return e.Status(token, id).Str("data", "status") == "SUCCESS"
			}
		}},
		{"transfer whose event was never published", func(t *testing.T) func() bool {
			r := e.Call(wallets, token, "POST", "/wallets/"+xaf+"/transfer-internal", `{"amount":1000}`)
			if r.Status != 200 {
				t.Fatalf("transfer: %s", r.Raw)
			}
			return func() bool {
				left, err := outbox.Unpublished(ctx, time.Now().Add(time.Hour), 10)
				return err == nil && len(left) == 0
			}
		}},
		{"card funding the issuer did not answer", func(t *testing.T) func() bool {
			if r := e.Call(e.IssuerDown(t), token, "POST", "/cards/"+card+"/fund", `{"amount":5}`); r.Status != 502 {
				t.Fatalf("fund with the issuer down: %d %s", r.Status, r.Raw)
			}
			return func() bool { return e.Call(e.Cards, token, "GET", "/cards/"+card, "").Str("data", "balance") == "15" }
		}},
		{"terminated card whose open hold the termination left", func(t *testing.T) func() bool {
			r := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customer+`","amount":5}`)
			if r.Status != 201 {
				t.Fatalf("issue: %s", r.Raw)
			}
			ended := r.Str("data", "id")
			e.OpenHolds(companyID, ended, 1, 200)
			if r := e.Call(e.Cards, token, "POST", "/cards/"+ended+"/terminate", ""); r.Status != 200 || r.Str("data", "held_amount") != "2" {
				t.Fatalf("terminate: %d %s", r.Status, r.Raw)
			}
			return func() bool {
				return e.Call(e.Cards, token, "GET", "/cards/"+ended+"?sync=false", "").Str("data", "balance") == "0"
			}
		}},
		{"declared funding whose bank message was lost", func(t *testing.T) func() bool {
			r := e.Call(wallets, token, "POST", "/wallets/fund", `{"wallet_id":"`+usd+`","amount":40,"reference":"sweep-funding"}`)
			if r.Status != 202 || r.Str("data", "status") != "PENDING" {
				t.Fatalf("fund: %d %s", r.Status, r.Raw)
			}
			id := r.Str("data", "id")
			return func() bool {
				return e.Call(e.Wallets, token, "GET", "/wallet/transactions/"+id, "").Str("data", "status") == "SUCCESS"
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
				sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return at })
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
	e.VerifyCards(companyID)
}
