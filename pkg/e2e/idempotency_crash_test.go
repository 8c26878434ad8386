package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/walletsapi"
	"payments/pkg/idempotency"
)

// killedAfterCommit returns cfg whose writes of a stored response fail: a
// function built on it commits its movement of money (and the effect its
// key records, in the same transaction) and then dies before its response
// is kept, as a function killed between the two would. Its client gets the
// response here; a real one would get none.
func killedAfterCommit(cfg function.Config) function.Config {
	return apptest.Failing(cfg, func(in any) bool {
		u, ok := in.(*dynamodb.UpdateItemInput)
		return ok && strings.Contains(aws.ToString(u.UpdateExpression), "response_status")
	})
}

// TestIdempotencyAfterACrash kills, on each route that takes an
// Idempotency-Key, the handler between the commit of its movement and the
// storing of its response. The retry with the key is 409 while the first
// request's lease runs; once it has ended, the retry is answered from what
// the first request committed (the same status and body, marked
// Idempotent-Replayed), and no money moves again: the balances, the counts
// and the ledger invariants are those the first request left.
func TestIdempotencyAfterACrash(t *testing.T) {
	e := apptest.NewCardsTestEnv(t)
	ctx := context.Background()
	killedCfg := killedAfterCommit(e.Cfg)
	killedPayments, err := paymentsapi.New(ctx, apptest.Recording(killedCfg, "payments"))
	if err != nil {
		t.Fatal(err)
	}
	killedWallets, err := walletsapi.New(ctx, apptest.Recording(killedCfg, "wallets"))
	if err != nil {
		t.Fatal(err)
	}
	killedCards := e.CardsFunction(t, killedCfg)

	payCompany, payToken, xaf := e.Company("10000")
	cardCompany, cardToken, usd, customer := e.CardCompany("200", "CRASH01")
	issue := func() string {
		r := e.Call(e.Cards, cardToken, "POST", "/cards", fmt.Sprintf(`{"customer_id":%q,"amount":20}`, customer))
		if r.Status != 201 {
			t.Fatalf("issue: %s", r.Raw)
		}
		return r.Str("data", "id")
	}
	fxCompany, fxToken, fxXAF, fxUSD, rateID := e.FxCompany("100000", "0.0016")

	// state is what must not change when a request is replayed.
	state := func(token, walletID string, lists ...string) string {
		out := fmt.Sprint(e.Wallet(token, walletID))
		for _, l := range lists {
			h := e.Wallets
			if strings.HasPrefix(l, "/payment/") {
				h = e.Payments
			}
			out += " " + e.Call(h, token, "GET", l, "").Raw
		}
		return out
	}
	tests := []struct {
		route          string
		company, token string
		killed, fn     function.HTTPHandler
		target, body   string
		wallet         string
		lists          []string
		status         int
	}{
		{"payout", payCompany, payToken, killedPayments, e.Payments, "/payment/payout", payoutBody(1000), xaf, []string{"/payment/transactions"}, 200},
		{"collect", payCompany, payToken, killedPayments, e.Payments, "/payment/collect", payoutBody(1000), xaf, []string{"/payment/transactions"}, 200},
		{"card issue", cardCompany, cardToken, killedCards, e.Cards, "/cards", fmt.Sprintf(`{"customer_id":%q,"amount":10}`, customer), usd, nil, 201},
		{"card fund", cardCompany, cardToken, killedCards, e.Cards, "/cards/" + issue() + "/fund", `{"amount":5}`, usd, nil, 200},
		{"card withdraw", cardCompany, cardToken, killedCards, e.Cards, "/cards/" + issue() + "/withdraw", `{"amount":5}`, usd, nil, 200},
		{"card terminate", cardCompany, cardToken, killedCards, e.Cards, "/cards/" + issue() + "/terminate", `{}`, usd, nil, 200},
		{"conversion", fxCompany, fxToken, killedWallets, e.Wallets, "/partner/wallets/xaf-usd-conversion",
			fmt.Sprintf(`{"source_wallet_id":%q,"amount":10000}`, fxXAF), fxUSD, nil, 200},
		{"deposit", fxCompany, fxToken, killedWallets, e.Wallets, "/wallets/deposit",
			fmt.Sprintf(`{"sourceWallet":{"id":%q,"amount":10000},"destinationWallet":{"id":%q},"exchangeRate":{"exchangeRateId":%q}}`, fxXAF, fxUSD, rateID), fxXAF, nil, 200},
		{"transfer-internal", fxCompany, fxToken, killedWallets, e.Wallets, "/wallets/" + fxXAF + "/transfer-internal", `{"amount":1000}`, fxXAF, nil, 200},
		{"declared funding", fxCompany, fxToken, killedWallets, e.Wallets, "/wallets/fund",
			fmt.Sprintf(`{"wallet_id":%q,"amount":1000,"reference":"crash-funding"}`, fxXAF), fxXAF, []string{"/wallet/transactions?limit=100"}, 202},
	}
	for _, tt := range tests {
		t.Run(tt.route, func(t *testing.T) {
			key := "crash-" + strings.ReplaceAll(tt.route, " ", "-")
			lists := append([]string{"/wallet/transactions?limit=100"}, tt.lists...)
			before := state(tt.token, tt.wallet, lists...)
			first := e.Call(tt.killed, tt.token, "POST", tt.target, tt.body, idempotency.Header, key)
			if first.Status != tt.status {
				t.Fatalf("first request: %d %s", first.Status, first.Raw)
			}
			after := state(tt.token, tt.wallet, lists...)
			if after == before {
				t.Fatalf("the first request moved nothing")
			}
			checkCode(t, e.Call(tt.fn, tt.token, "POST", tt.target, tt.body, idempotency.Header, key), 409, "IDEMPOTENCY_KEY_IN_USE")

			e.EndLease(tt.company, key)
			rebuilt := e.Call(tt.fn, tt.token, "POST", tt.target, tt.body, idempotency.Header, key)
			checkReplay(t, first, rebuilt)
			if now := state(tt.token, tt.wallet, lists...); now != after {
				t.Fatalf("the retry moved money again:\n%s\nafter the first request:\n%s", now, after)
			}
			// The rebuilt answer is stored: replayed as any other.
			checkReplay(t, first, e.Call(tt.fn, tt.token, "POST", tt.target, tt.body, idempotency.Header, key))
		})
	}
	e.Verify(payCompany)
	e.VerifyCards(cardCompany)
	e.VerifyBoth(fxCompany)
}

// TestIdempotencyIssuerUnanswered: a keyed card funding whose issuer does
// not answer is 502 CARD_ISSUER_UNAVAILABLE with Retry-After, its money
// already off the wallet. The retry with the key, the issuer back, is
// answered from that funding, carried on (the issuer asked again on the
// same card transaction): the card is funded once.
func TestIdempotencyIssuerUnanswered(t *testing.T) {
	e := apptest.NewCardsTestEnv(t)
	companyID, token, walletID, customer := e.CardCompany("100", "ISSUER01")
	card := e.Call(e.Cards, token, "POST", "/cards", fmt.Sprintf(`{"customer_id":%q,"amount":10}`, customer)).Str("data", "id")
	first := e.Call(e.IssuerDown(t), token, "POST", "/cards/"+card+"/fund", `{"amount":5}`, idempotency.Header, "fund-once")
	if first.Status != 502 || first.Str("code") != "CARD_ISSUER_UNAVAILABLE" || first.Headers["Retry-After"] == "" {
		t.Fatalf("fund with the issuer down: %d %v %s", first.Status, first.Headers, first.Raw)
	}
	retry := e.Call(e.Cards, token, "POST", "/cards/"+card+"/fund", `{"amount":5}`, idempotency.Header, "fund-once")
	if retry.Status != 200 || retry.Headers[idempotency.ReplayedHeader] != "true" ||
		retry.Str("data", "status") != "SUCCESS" || retry.Str("data", "card_balance_after") != "15" {
		t.Fatalf("retry: %d %v %s", retry.Status, retry.Headers, retry.Raw)
	}
	checkReplay(t, retry, e.Call(e.Cards, token, "POST", "/cards/"+card+"/fund", `{"amount":5}`, idempotency.Header, "fund-once"))
	if got := e.Call(e.Cards, token, "GET", "/cards/"+card, "").Str("data", "balance"); got != "15" {
		t.Fatalf("card balance %s, want 15: funded once", got)
	}
	if got := e.Payout(token, walletID); got != "84" { // 100 − 11 (issue with its fee) − 5
		t.Fatalf("payout_balance %s, want 84", got)
	}
	e.VerifyCards(companyID)
}
