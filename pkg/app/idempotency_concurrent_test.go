package app

import (
	"encoding/json"
	"sync"
	"testing"

	"payments/pkg/idempotency"
)

// checkOneRun fails t unless exactly one of answers ran the request (a 200
// not replayed) and every other is that answer replayed or a 409
// IDEMPOTENCY_KEY_IN_USE with Retry-After; it returns the one that ran.
func checkOneRun(t *testing.T, answers []result) result {
	t.Helper()
	var ran []result
	for _, r := range answers {
		if r.status == 200 && r.headers[idempotency.ReplayedHeader] == "" {
			ran = append(ran, r)
		}
	}
	if len(ran) != 1 {
		t.Fatalf("%d requests ran", len(ran))
	}
	counts := map[string]int{}
	for _, r := range answers {
		switch {
		case r.status == 200 && r.headers[idempotency.ReplayedHeader] == "":
			counts["ran"]++
		case r.status == 200:
			checkReplay(t, ran[0], r)
			counts["replayed"]++
		case r.status == 409 && r.str("code") == "IDEMPOTENCY_KEY_IN_USE" && r.headers["Retry-After"] == "1":
			counts["in use"]++
		default:
			t.Fatalf("answer %d %v %s", r.status, r.headers, r.raw)
		}
	}
	t.Logf("answers %v", counts)
	return ran[0]
}

// TestIdempotencyConcurrentPayouts sends 100 identical payouts with one key
// at once, through the payments function on DynamoDB Local and the SQS
// emulator: one payout, the money moved once; then a retry replays it.
func TestIdempotencyConcurrentPayouts(t *testing.T) {
	e := newPaymentsTestEnv(t)
	companyID, token, walletID := e.company("10000")
	answers := make([]result, 100)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			answers[i] = e.call(e.payments, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, "one-payout")
		})
	}
	wg.Wait()
	ran := checkOneRun(t, answers)
	if w := e.wallet(token, walletID); w["payout_available"] != json.Number("8985") || w["payout_reserved"] != json.Number("1015") {
		t.Fatalf("wallet %v", w)
	}
	if n := e.payoutCount(token); n != "1" {
		t.Fatalf("%s payments", n)
	}
	checkReplay(t, ran, e.call(e.payments, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, "one-payout"))
	e.verify(companyID)
}

// TestIdempotencyConcurrentCardFunding sends 30 identical fundings of a
// card with one key at once: the card is funded once.
func TestIdempotencyConcurrentCardFunding(t *testing.T) {
	e := newCardsTestEnv(t)
	companyID, token, walletID, customerID := e.cardCompany("100", "CM-8101")
	card := e.call(e.cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":20}`)
	if card.status != 201 {
		t.Fatalf("issue: %s", card.raw)
	}
	target := "/cards/" + card.str("data", "id") + "/fund"
	before := e.payout(token, walletID)
	answers := make([]result, 30)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			answers[i] = e.call(e.cards, token, "POST", target, `{"amount":10}`, idempotency.Header, "fund-once")
		})
	}
	wg.Wait()
	ran := checkOneRun(t, answers)
	if r := e.call(e.cards, token, "GET", "/cards/"+card.str("data", "id")+"?sync=false", ""); r.str("data", "balance") != "30" {
		t.Fatalf("card balance %s, want 30", r.str("data", "balance"))
	}
	if after := e.payout(token, walletID); before != "79" || after != "69" {
		t.Fatalf("wallet payout_balance %s, then %s", before, after)
	}
	checkReplay(t, ran, e.call(e.cards, token, "POST", target, `{"amount":10}`, idempotency.Header, "fund-once"))
	e.verifyCards(companyID)
}
