package app

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/payments"
	"payments/pkg/store"
)

// TestSweeperExpiresStalePayout: a payout the operator never confirms (a
// number ending in 999) is PROCESSING until the sweeper function, past its
// 15-minute deadline, fails it with the time-out message, releases the
// reservation and publishes the status update.
func TestSweeperExpiresStalePayout(t *testing.T) {
	e := newPaymentsTestEnv(t)
	companyID, token, walletID := e.company("1000")
	r := e.call(e.payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000999","amount":100,"currency":"XAF"}`)
	if r.status != 200 {
		t.Fatalf("payout: %s", r.raw)
	}
	id := r.str("data", "transaction_id")
	e.pump(20*time.Second, func() bool { return e.status(token, id).str("data", "status") == "PROCESSING" })

	sweep := newSweeper(recording(e.cfg, "sweeper"), func() time.Time { return time.Now().Add(16 * time.Minute) })
	if err := sweep(context.Background(), events.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	if s := e.status(token, id); s.str("data", "status") != "FAILED" || s.str("data", "error_message") != payments.TimeoutMessage {
		t.Fatalf("after the deadline: %s", s.raw)
	}
	if w := e.wallet(token, walletID); w["payout_available"] != json.Number("1000") || w["payout_reserved"] != json.Number("0") {
		t.Fatalf("wallet %v", w)
	}
	left, err := store.NewOutbox(e.db).Unpublished(context.Background(), time.Now().Add(time.Hour), 10)
	if err != nil || len(left) != 0 {
		t.Fatalf("events left unpublished: %v, %v", left, err)
	}
	e.verify(companyID)
}
