package cards_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/app/apptest"
)

// functionTimeout is the invocation the deadline tests give a function:
// short, so that a slow dependency outlives it.
const functionTimeout = 3 * time.Second

// TestMovementAnsweredWithinDeadline: a card funding or withdrawal whose
// issuer does not answer within the function's time is answered by the
// function, before its deadline, with what it committed: 502
// CARD_ISSUER_UNAVAILABLE carrying the PROCESSING transaction, the money
// out of its source; never the platform's time-out, which would leave the
// client to guess. The sweeper finishes it once the issuer answers.
func TestMovementAnsweredWithinDeadline(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	companyID, token, walletID, customerID := e.CardCompany("100", "CM-7801")
	card := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":20}`).Str("data", "id")
	slow := e.CardsFunction(t, apptest.IssuerSlowConfig(e.Cfg))
	for _, c := range []struct {
		route, balance, card string
	}{
		// 100 − 21 (the card and its fee) − 5 (the funding, no fee)
		{"fund", "74", "20"},
		{"withdraw", "74", "15"},
	} {
		t.Run(c.route, func(t *testing.T) {
			r := e.CallWithin(functionTimeout, slow, token, "POST", "/cards/"+card+"/"+c.route, `{"amount":5}`)
			if r.Status != 502 || r.Str("code") != "CARD_ISSUER_UNAVAILABLE" || r.Headers["Retry-After"] == "" {
				t.Fatalf("%s behind a slow issuer: %d %s", c.route, r.Status, r.Raw)
			}
			tx := r.Str("data", "transaction_id")
			if r.Str("data", "status") != "PROCESSING" || r.Str("data", "card_id") != card || r.Str("data", "amount") != "5" {
				t.Errorf("the committed movement in the answer: %s", r.Raw)
			}
			if got := e.Call(e.Cards, token, "GET", "/cards/"+card+"/transactions/"+tx, ""); got.Str("data", "status") != "PROCESSING" {
				t.Errorf("the transaction as read: %s", got.Raw)
			}
			if got := e.Payout(token, walletID); got != c.balance {
				t.Errorf("payout_balance %s, want %s", got, c.balance)
			}
			if got := e.Call(e.Cards, token, "GET", "/cards/"+card+"?sync=false", "").Str("data", "balance"); got != c.card {
				t.Errorf("card balance %s, want %s", got, c.card)
			}
			e.VerifyCards(companyID)
		})
	}
	sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return time.Now().Add(2 * time.Minute) })
	if _, err := sweep(context.Background(), events.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	// The funding reached the card (+5), the withdrawal the wallet (+5).
	if got := e.Call(e.Cards, token, "GET", "/cards/"+card+"?sync=false", "").Str("data", "balance"); got != "20" {
		t.Errorf("card balance %s after the sweep, want 20", got)
	}
	if got := e.Payout(token, walletID); got != "79" {
		t.Errorf("payout_balance %s after the sweep, want 79", got)
	}
	e.VerifyCards(companyID)
}
