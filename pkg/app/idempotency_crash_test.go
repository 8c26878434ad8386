package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
	return failing(cfg, func(in any) bool {
		u, ok := in.(*dynamodb.UpdateItemInput)
		return ok && strings.Contains(aws.ToString(u.UpdateExpression), "response_status")
	})
}

// endLease ends the lease of the company's key, as time would.
func (e *cardsTestEnv) endLease(companyID, key string) {
	e.t.Helper()
	_, err := e.db.Client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(e.db.Table),
		Key: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "COMPANY#" + companyID},
			"SK": &types.AttributeValueMemberS{Value: "IDEMPOTENCY#" + key},
		},
		UpdateExpression:          aws.String("SET lease_until = :past"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":past": &types.AttributeValueMemberN{Value: "0"}},
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// TestIdempotencyAfterACrash kills, on each route that takes an
// Idempotency-Key, the handler between the commit of its movement and the
// storing of its response. The retry with the key is 409 while the first
// request's lease runs; once it has ended, the retry is answered from what
// the first request committed (the same status and body, marked
// Idempotent-Replayed), and no money moves again: the balances, the counts
// and the ledger invariants are those the first request left.
func TestIdempotencyAfterACrash(t *testing.T) {
	e := newCardsTestEnv(t)
	ctx := context.Background()
	killedCfg := killedAfterCommit(e.cfg)
	killedPayments, err := paymentsapi.New(ctx, recording(killedCfg, "payments"))
	if err != nil {
		t.Fatal(err)
	}
	killedWallets, err := walletsapi.New(ctx, recording(killedCfg, "wallets"))
	if err != nil {
		t.Fatal(err)
	}
	killedCards := e.cardsFunction(t, killedCfg)

	payCompany, payToken, xaf := e.company("10000")
	cardCompany, cardToken, usd, customer := e.cardCompany("200", "CRASH01")
	issue := func() string {
		r := e.call(e.cards, cardToken, "POST", "/cards", fmt.Sprintf(`{"customer_id":%q,"amount":20}`, customer))
		if r.status != 201 {
			t.Fatalf("issue: %s", r.raw)
		}
		return r.str("data", "id")
	}
	fxCompany, fxToken, fxXAF, fxUSD, rateID := e.fxCompany("100000", "0.0016")

	// state is what must not change when a request is replayed.
	state := func(token, walletID string, lists ...string) string {
		out := fmt.Sprint(e.wallet(token, walletID))
		for _, l := range lists {
			h := e.wallets
			if strings.HasPrefix(l, "/payment/") {
				h = e.payments
			}
			out += " " + e.call(h, token, "GET", l, "").raw
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
		{"payout", payCompany, payToken, killedPayments, e.payments, "/payment/payout", payoutBody(1000), xaf, []string{"/payment/transactions"}, 200},
		{"collect", payCompany, payToken, killedPayments, e.payments, "/payment/collect", payoutBody(1000), xaf, []string{"/payment/transactions"}, 200},
		{"card issue", cardCompany, cardToken, killedCards, e.cards, "/cards", fmt.Sprintf(`{"customer_id":%q,"amount":10}`, customer), usd, nil, 201},
		{"card fund", cardCompany, cardToken, killedCards, e.cards, "/cards/" + issue() + "/fund", `{"amount":5}`, usd, nil, 200},
		{"card withdraw", cardCompany, cardToken, killedCards, e.cards, "/cards/" + issue() + "/withdraw", `{"amount":5}`, usd, nil, 200},
		{"card terminate", cardCompany, cardToken, killedCards, e.cards, "/cards/" + issue() + "/terminate", `{}`, usd, nil, 200},
		{"conversion", fxCompany, fxToken, killedWallets, e.wallets, "/partner/wallets/xaf-usd-conversion",
			fmt.Sprintf(`{"source_wallet_id":%q,"amount":10000}`, fxXAF), fxUSD, nil, 200},
		{"deposit", fxCompany, fxToken, killedWallets, e.wallets, "/wallets/deposit",
			fmt.Sprintf(`{"sourceWallet":{"id":%q,"amount":10000},"destinationWallet":{"id":%q},"exchangeRate":{"exchangeRateId":%q}}`, fxXAF, fxUSD, rateID), fxXAF, nil, 200},
		{"transfer-internal", fxCompany, fxToken, killedWallets, e.wallets, "/wallets/" + fxXAF + "/transfer-internal", `{"amount":1000}`, fxXAF, nil, 200},
		{"declared funding", fxCompany, fxToken, killedWallets, e.wallets, "/wallets/fund",
			fmt.Sprintf(`{"wallet_id":%q,"amount":1000,"reference":"crash-funding"}`, fxXAF), fxXAF, []string{"/wallet/transactions?limit=100"}, 202},
	}
	for _, tt := range tests {
		t.Run(tt.route, func(t *testing.T) {
			key := "crash-" + strings.ReplaceAll(tt.route, " ", "-")
			lists := append([]string{"/wallet/transactions?limit=100"}, tt.lists...)
			before := state(tt.token, tt.wallet, lists...)
			first := e.call(tt.killed, tt.token, "POST", tt.target, tt.body, idempotency.Header, key)
			if first.status != tt.status {
				t.Fatalf("first request: %d %s", first.status, first.raw)
			}
			after := state(tt.token, tt.wallet, lists...)
			if after == before {
				t.Fatalf("the first request moved nothing")
			}
			checkCode(t, e.call(tt.fn, tt.token, "POST", tt.target, tt.body, idempotency.Header, key), 409, "IDEMPOTENCY_KEY_IN_USE")

			e.endLease(tt.company, key)
			rebuilt := e.call(tt.fn, tt.token, "POST", tt.target, tt.body, idempotency.Header, key)
			checkReplay(t, first, rebuilt)
			if now := state(tt.token, tt.wallet, lists...); now != after {
				t.Fatalf("the retry moved money again:\n%s\nafter the first request:\n%s", now, after)
			}
			// The rebuilt answer is stored: replayed as any other.
			checkReplay(t, first, e.call(tt.fn, tt.token, "POST", tt.target, tt.body, idempotency.Header, key))
		})
	}
	e.verify(payCompany)
	e.verifyCards(cardCompany)
	e.verifyBoth(fxCompany)
}

// TestIdempotencyIssuerUnanswered: a keyed card funding whose issuer does
// not answer is 502 CARD_ISSUER_UNAVAILABLE with Retry-After, its money
// already off the wallet. The retry with the key, the issuer back, is
// answered from that funding, carried on (the issuer asked again on the
// same card transaction): the card is funded once.
func TestIdempotencyIssuerUnanswered(t *testing.T) {
	e := newCardsTestEnv(t)
	companyID, token, walletID, customer := e.cardCompany("100", "ISSUER01")
	card := e.call(e.cards, token, "POST", "/cards", fmt.Sprintf(`{"customer_id":%q,"amount":10}`, customer)).str("data", "id")
	first := e.call(e.issuerDown(t), token, "POST", "/cards/"+card+"/fund", `{"amount":5}`, idempotency.Header, "fund-once")
	if first.status != 502 || first.str("code") != "CARD_ISSUER_UNAVAILABLE" || first.headers["Retry-After"] == "" {
		t.Fatalf("fund with the issuer down: %d %v %s", first.status, first.headers, first.raw)
	}
	retry := e.call(e.cards, token, "POST", "/cards/"+card+"/fund", `{"amount":5}`, idempotency.Header, "fund-once")
	if retry.status != 200 || retry.headers[idempotency.ReplayedHeader] != "true" ||
		retry.str("data", "status") != "SUCCESS" || retry.str("data", "card_balance_after") != "15" {
		t.Fatalf("retry: %d %v %s", retry.status, retry.headers, retry.raw)
	}
	checkReplay(t, retry, e.call(e.cards, token, "POST", "/cards/"+card+"/fund", `{"amount":5}`, idempotency.Header, "fund-once"))
	if got := e.call(e.cards, token, "GET", "/cards/"+card, "").str("data", "balance"); got != "15" {
		t.Fatalf("card balance %s, want 15: funded once", got)
	}
	if got := e.payout(token, walletID); got != "84" { // 100 − 11 (issue with its fee) − 5
		t.Fatalf("payout_balance %s, want 84", got)
	}
	e.verifyCards(companyID)
}
