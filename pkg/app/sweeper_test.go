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
	"payments/pkg/function/sweeper"
	"payments/pkg/store"
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
	if err := sweep(context.Background(), events.EventBridgeEvent{}); err != nil {
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
