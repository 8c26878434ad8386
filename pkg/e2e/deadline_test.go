package e2e_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/pkg/app/apptest"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/walletsapi"
)

// functionTimeout is the invocation these tests give a function: short,
// so that a slow dependency outlives it.
const functionTimeout = 3 * time.Second

// slowQueue matches the SQS sends to the queues urls.
func slowQueue(urls ...string) func(any) bool {
	return func(in any) bool {
		switch in := in.(type) {
		case *sqs.SendMessageInput:
			return slices.Contains(urls, aws.ToString(in.QueueUrl))
		case *sqs.SendMessageBatchInput:
			return slices.Contains(urls, aws.ToString(in.QueueUrl))
		}
		return false
	}
}

// TestMoneyAnsweredWithinDeadline: each route that commits money, when
// what follows its commit (the queue that carries its work or its events)
// does not answer within the function's time, still answers before the
// function's own deadline, with what it committed, never leaving the
// platform to answer its time-out (a client that sees that one does not
// know its money moved, and sends the request again). The ledger holds,
// and the sweeper carries the work on. Card fundings and withdrawals
// behind a slow issuer: pkg/cards, TestMovementAnsweredWithinDeadline.
func TestMoneyAnsweredWithinDeadline(t *testing.T) {
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, xaf, usd, rateID := e.FxCompany("100000", "0.0016")
	if r := e.Admin("POST", "/admin/wallets/"+xaf+"/credit", `{"balance":"payout","amount":100000,"reference":"opening"}`); r.Status != 200 {
		t.Fatalf("credit: %s", r.Raw)
	}
	ctx := context.Background()
	payments, err := paymentsapi.New(ctx, apptest.Recording(apptest.SlowWith(e.Cfg, slowQueue(e.Payouts, e.Bulk)), "payments"))
	if err != nil {
		t.Fatal(err)
	}
	wallets, err := walletsapi.New(ctx, apptest.Recording(apptest.SlowWith(e.Cfg, slowQueue(e.Webhooks)), "wallets"))
	if err != nil {
		t.Fatal(err)
	}
	item := `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":1000,"currency":"XAF"}`
	var payout string
	for _, c := range []struct {
		name, target, body string
		wallets            bool
		status             int
		check              func(apptest.Result) bool
	}{
		{"payout", "/payment/payout", payoutBody(1000), false, 200, func(r apptest.Result) bool {
			payout = r.Str("data", "transaction_id")
			return r.Str("data", "status") == "PENDING"
		}},
		{"bulk payouts", "/payment/payouts/bulk", `{"items":[` + item + `,` + item + `]}`, false, 202, func(r apptest.Result) bool {
			return r.Str("data", "accepted_count") == "2"
		}},
		{"conversion", "/partner/wallets/xaf-usd-conversion", `{"source_wallet_id":"` + xaf + `","amount":1000,"exchangeRateId":"` + rateID + `"}`, true, 200,
			func(r apptest.Result) bool { return r.Str("data", "conversion_id") != "<nil>" }},
		{"deposit", "/wallets/deposit", `{"sourceWallet":{"id":"` + xaf + `","amount":1000},"destinationWallet":{"id":"` + usd + `"},"exchangeRate":{"exchangeRateId":"` + rateID + `"}}`, true, 200,
			func(r apptest.Result) bool { return r.Str("data", "deposit_id") != "<nil>" }},
		{"transfer", "/wallets/" + xaf + "/transfer-internal", `{"amount":1000}`, true, 200,
			func(r apptest.Result) bool { return r.Str("data", "transfer_id") != "<nil>" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := payments
			if c.wallets {
				h = wallets
			}
			r := e.CallWithin(functionTimeout, h, token, "POST", c.target, c.body)
			if r.Status != c.status || !c.check(r) {
				t.Errorf("%s behind a slow queue: %d %s", c.name, r.Status, r.Raw)
			}
			e.VerifyBoth(companyID)
		})
	}
	// The payout's submission was not queued: the sweeper queues it.
	sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return time.Now().Add(2 * time.Minute) })
	if _, err := sweep(ctx, events.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	e.Pump(60*time.Second, func() bool { return e.Status(token, payout).Str("data", "status") == "SUCCESS" })
	e.VerifyBoth(companyID)
}
