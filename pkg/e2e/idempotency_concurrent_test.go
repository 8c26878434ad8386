package e2e_test

import (
	"encoding/json"
	"sync"
	"testing"

	"payments/pkg/app/apptest"
	"payments/pkg/idempotency"
)

// checkOneRun fails t unless exactly one of answers ran the request (a 200
// not replayed) and every other is that answer replayed or a 409
// IDEMPOTENCY_KEY_IN_USE with Retry-After; it returns the one that ran.
func checkOneRun(t *testing.T, answers []apptest.Result) apptest.Result {
	t.Helper()
	var ran []apptest.Result
	for _, r := range answers {
		if r.Status == 200 && r.Headers[idempotency.ReplayedHeader] == "" {
			ran = append(ran, r)
		}
	}
	if len(ran) != 1 {
		t.Fatalf("%d requests ran", len(ran))
	}
	counts := map[string]int{}
	for _, r := range answers {
		switch {
		case r.Status == 200 && r.Headers[idempotency.ReplayedHeader] == "":
			counts["ran"]++
		case r.Status == 200:
			checkReplay(t, ran[0], r)
			counts["replayed"]++
		case r.Status == 409 && r.Str("code") == "IDEMPOTENCY_KEY_IN_USE" && r.Headers["Retry-After"] == "1":
			counts["in use"]++
		default:
			t.Fatalf("answer %d %v %s", r.Status, r.Headers, r.Raw)
		}
	}
	t.Logf("answers %v", counts)
	return ran[0]
}

// TestIdempotencyConcurrentPayouts sends 100 identical payouts with one key
// at once, through the payments function on DynamoDB Local and the SQS
// emulator: one payout, the money moved once; then a retry replays it.
func TestIdempotencyConcurrentPayouts(t *testing.T) {
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, walletID := e.Company("10000")
	answers := make([]apptest.Result, 100)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			answers[i] = e.Call(e.Payments, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, "one-payout")
		})
	}
	wg.Wait()
	ran := checkOneRun(t, answers)
	if w := e.Wallet(token, walletID); w["payout_available"] != json.Number("8985") || w["payout_reserved"] != json.Number("1015") {
		t.Fatalf("wallet %v", w)
	}
	if n := e.PayoutCount(token); n != "1" {
		t.Fatalf("%s payments", n)
	}
	checkReplay(t, ran, e.Call(e.Payments, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, "one-payout"))
	e.Verify(companyID)
}

// TestIdempotencyConcurrentCardFunding sends 30 identical fundings of a
// card with one key at once: the card is funded once.
func TestIdempotencyConcurrentCardFunding(t *testing.T) {
	e := apptest.NewCardsTestEnv(t)
	companyID, token, walletID, customerID := e.CardCompany("100", "CM-8101")
	card := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":20}`)
	if card.Status != 201 {
		t.Fatalf("issue: %s", card.Raw)
	}
	target := "/cards/" + card.Str("data", "id") + "/fund"
	before := e.Payout(token, walletID)
	answers := make([]apptest.Result, 30)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			answers[i] = e.Call(e.Cards, token, "POST", target, `{"amount":10}`, idempotency.Header, "fund-once")
		})
	}
	wg.Wait()
	ran := checkOneRun(t, answers)
	if r := e.Call(e.Cards, token, "GET", "/cards/"+card.Str("data", "id")+"?sync=false", ""); r.Str("data", "balance") != "30" {
		t.Fatalf("card balance %s, want 30", r.Str("data", "balance"))
	}
	if after := e.Payout(token, walletID); before != "79" || after != "69" {
		t.Fatalf("wallet payout_balance %s, then %s", before, after)
	}
	checkReplay(t, ran, e.Call(e.Cards, token, "POST", target, `{"amount":10}`, idempotency.Header, "fund-once"))
	e.VerifyCards(companyID)
}
