package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/cards"
	"payments/pkg/function"
	"payments/pkg/function/services"
	"payments/pkg/httpapi"
	"payments/pkg/queue/queuetest"
	"payments/pkg/waittest"
)

// TestCardNetworkRoutes drives the card-network sandbox through the cards
// function's routes: each answers 201 with the card transaction its
// notification made, once the card-worker has applied it.
func TestCardNetworkRoutes(t *testing.T) {
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 5)
	post := func(target, body string) result {
		t.Helper()
		return e.call(e.cards, token, "POST", target, body)
	}
	created := func(r result, typ, status, amount string) string {
		t.Helper()
		if r.status != 201 || r.str("data", "type") != typ || r.str("data", "status") != status || r.str("data", "amount") != amount ||
			r.str("data", "category") != "CARD" || r.str("data", "card", "id") != cardID || r.str("data", "customer", "id") == "<nil>" {
			t.Fatalf("want 201 %s %s %s: %d %s", typ, status, amount, r.status, r.raw)
		}
		return r.str("data", "id")
	}

	auth := created(post("/sandbox/cards/"+cardID+"/authorizations",
		`{"amount":12.5,"merchant_name":"Book Shop","merchant_city":"Lyon","merchant_country":"fr"}`), "AUTHORIZATION", "PENDING", "12.5")
	if r := e.call(e.cards, token, "GET", "/cards/"+cardID+"?sync=false", ""); r.str("data", "balance") != "20" || r.str("data", "available_balance") != "7.5" {
		t.Errorf("card while 12.50 is held: %s", r.raw)
	}
	settled := post("/sandbox/card-transactions/"+auth+"/settle", `{"amount":10}`)
	created(settled, "SETTLEMENT", "SUCCESS", "10")
	if settled.str("data", "original_transaction_id") != auth || settled.str("data", "merchant", "country") != "FR" {
		t.Errorf("settlement %s", settled.raw)
	}
	// 2.5 % of 10.00 + 0.50: a CROSS-BORDER transaction of 0.75.
	r := e.call(e.cards, token, "GET", "/cards/"+cardID+"/transactions?type=CROSS-BORDER", "")
	if items := r.items(); len(items) != 1 || fmt.Sprint(items[0].(map[string]any)["amount"]) != "0.75" {
		t.Errorf("cross-border transactions %s", r.raw)
	}
	if r := e.call(e.cards, token, "GET", "/cards/"+cardID+"?sync=false", ""); r.str("data", "balance") != "9.25" || r.str("data", "available_balance") != "9.25" {
		t.Errorf("card after the settlement: %s", r.raw)
	}
	created(post("/sandbox/card-transactions/"+auth+"/refund", `{"amount":4}`), "REFUND", "SUCCESS", "4")

	for _, c := range []struct {
		name, target, body string
		status             int
		code, field        string
	}{
		{"settle twice", "/sandbox/card-transactions/" + auth + "/settle", ``, 400, "ALREADY_SETTLED", ""},
		{"reverse a settled one", "/sandbox/card-transactions/" + auth + "/reverse", ``, 400, "ALREADY_SETTLED", ""},
		{"refund more than left", "/sandbox/card-transactions/" + auth + "/refund", `{"amount":6.01}`, 400, "AMOUNT_EXCEEDS_SETTLED", ""},
		{"settle a settlement", "/sandbox/card-transactions/" + settled.str("data", "id") + "/settle", ``, 400, "NOT_AN_AUTHORIZATION", ""},
		{"reverse with an amount", "/sandbox/card-transactions/" + auth + "/reverse", `{"amount":1}`, 400, "INVALID_FIELD", "amount"},
		{"a string amount", "/sandbox/cards/" + cardID + "/authorizations", `{"amount":"12","merchant_name":"A","merchant_city":"B"}`, 400, "INVALID_FIELD", "amount"},
		{"no amount", "/sandbox/cards/" + cardID + "/authorizations", `{"merchant_name":"A","merchant_city":"B"}`, 400, "INVALID_FIELD", "amount"},
		{"three decimals", "/sandbox/cards/" + cardID + "/authorizations", `{"amount":1.005,"merchant_name":"A","merchant_city":"B"}`, 400, "INVALID_FIELD", "amount"},
		{"no merchant", "/sandbox/cards/" + cardID + "/authorizations", `{"amount":1,"merchant_city":"B"}`, 400, "INVALID_FIELD", "merchant_name"},
		{"no city", "/sandbox/cards/" + cardID + "/authorizations", `{"amount":1,"merchant_name":"A"}`, 400, "INVALID_FIELD", "merchant_city"},
		{"a bad country", "/sandbox/cards/" + cardID + "/authorizations", `{"amount":1,"merchant_name":"A","merchant_city":"B","merchant_country":"XX"}`, 400, "INVALID_FIELD", "merchant_country"},
		{"a bad type", "/sandbox/cards/" + cardID + "/authorizations", `{"amount":1,"merchant_name":"A","merchant_city":"B","type":"CAPTURE"}`, 400, "INVALID_FIELD", "type"},
		{"a verification with an amount", "/sandbox/cards/" + cardID + "/authorizations", `{"amount":1,"merchant_name":"A","merchant_city":"B","type":"VERIFICATION"}`, 400, "INVALID_FIELD", "amount"},
		{"an unknown field", "/sandbox/cards/" + cardID + "/authorizations", `{"amount":1,"merchant_name":"A","merchant_city":"B","mcc":"5411"}`, 400, "INVALID_FIELD", "mcc"},
		{"an unknown card", "/sandbox/cards/0196d1e2-0000-7000-8000-00000000dead/authorizations", `{"amount":1,"merchant_name":"A","merchant_city":"B"}`, 404, "CARD_NOT_FOUND", ""},
		{"an unknown transaction", "/sandbox/card-transactions/0196d1e2-0000-7000-8000-00000000dead/settle", ``, 404, "TRANSACTION_NOT_FOUND", ""},
		{"not an id", "/sandbox/card-transactions/nope/refund", ``, 404, "TRANSACTION_NOT_FOUND", ""},
	} {
		r := post(c.target, c.body)
		if r.status != c.status || r.str("code") != c.code || c.field != "" && r.str("field") != c.field {
			t.Errorf("%s: %d %s, want %d %s %s", c.name, r.status, r.raw, c.status, c.code, c.field)
		}
	}

	if v := post("/sandbox/cards/"+cardID+"/authorizations", `{"merchant_name":"Hotel Akwa","merchant_city":"Douala","type":"VERIFICATION"}`); v.status != 201 ||
		v.str("data", "status") != "SUCCESS" || v.str("data", "amount") != "0" || v.str("data", "hold_amount") != "0" {
		t.Errorf("verification: %s", v.raw)
	}
	if n := e.eventCount(token, "card.verification.completed"); n != 1 {
		t.Errorf("%d card.verification.completed events, want 1", n)
	}
	if r := e.call(e.cards, token, "PUT", "/cards/"+cardID+"/freeze", ""); r.status != 200 {
		t.Fatalf("freeze: %s", r.raw)
	}
	declined := post("/sandbox/cards/"+cardID+"/authorizations", `{"amount":1,"merchant_name":"Kiosk","merchant_city":"Austin"}`)
	created(declined, "DECLINE", "FAILED", "1")
	if declined.str("data", "decline_reason") != "card_frozen" || declined.str("data", "fee_amount") != "0.5" {
		t.Errorf("decline: %s", declined.raw)
	}

	// Another company sees none of it.
	_, other, _, _ := e.cardCompany("", "CM-9001")
	if r := e.call(e.cards, other, "POST", "/sandbox/cards/"+cardID+"/authorizations", `{"amount":1,"merchant_name":"A","merchant_city":"B"}`); r.status != 404 {
		t.Errorf("another company's card: %d %s", r.status, r.raw)
	}
	if r := e.call(e.cards, other, "POST", "/sandbox/card-transactions/"+auth+"/refund", ``); r.status != 404 || r.str("code") != "TRANSACTION_NOT_FOUND" {
		t.Errorf("another company's transaction: %d %s", r.status, r.raw)
	}

	term := post("/sandbox/cards/"+cardID+"/terminate", `{"reason":"risk block"}`)
	created(term, "TERMINATION", "SUCCESS", "12.75") // 9.25 + 4.00 refunded − 0.50 of the decline's fee
	if r := e.call(e.cards, token, "GET", "/cards/"+cardID+"?sync=false", ""); r.str("data", "status") != "TERMINATED" {
		t.Errorf("card after the issuer's termination: %s", r.raw)
	}
	if r := post("/sandbox/cards/"+cardID+"/terminate", ``); r.status != 400 || r.str("code") != "CARD_TERMINATED" {
		t.Errorf("terminating twice: %d %s", r.status, r.raw)
	}
	e.verifyCards(companyID)
}

// TestCardNetworkSandboxOnly: in production mode the sandbox routes do not
// exist.
func TestCardNetworkSandboxOnly(t *testing.T) {
	e := newNetworkEnv(t)
	_, token, _, cardID := e.fundedCard(5, 0)
	cfg := e.cfg
	cfg.Mode = function.ModeProduction
	prod := e.cardsFunction(t, cfg)
	if r := e.call(prod, token, "POST", "/sandbox/cards/"+cardID+"/authorizations", `{"amount":1,"merchant_name":"A","merchant_city":"B"}`); r.status != 404 {
		t.Errorf("a sandbox route in production: %d %s", r.status, r.raw)
	}
}

// TestCardNetworkQueued: a notification the card-worker has not applied
// within the sandbox's wait is answered 202 with its event id.
func TestCardNetworkQueued(t *testing.T) {
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(5, 0)
	cfg := e.cfg
	cfg.IssuerEventsQueueURL = queuetest.NewQueue(t, queuetest.Client(t), nil) // no worker reads it
	svc, err := testCards(cfg, e.db)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := testCardNetwork(cfg, svc)
	if err != nil {
		t.Fatal(err)
	}
	sb.Wait = 50 * time.Millisecond
	guard, err := services.TokenGuard(cfg, e.db)
	if err != nil {
		t.Fatal(err)
	}
	rt := httpapi.NewRouter(function.Errors, guard)
	cards.SandboxRoutes(rt, sb)
	r := e.call(function.HTTP(rt), token, "POST", "/sandbox/cards/"+cardID+"/authorizations", `{"amount":1,"merchant_name":"A","merchant_city":"B"}`)
	if r.status != 202 || r.str("data", "event_id") == "<nil>" {
		t.Fatalf("an authorization no worker applied: %d %s", r.status, r.raw)
	}
	if _, found, err := svc.Store.Outcome(context.Background(), companyID, r.str("data", "event_id")); err != nil || found {
		t.Errorf("the queued notification was applied (%v, %v)", found, err)
	}
}

// TestCardNetworkAnswerNeverInvitesARetry: once the network's notification
// is sent, a table too slow to read its outcome or its transaction answers
// 202 with the event id (read the card's transactions), never 503: these
// routes take no Idempotency-Key, and a retry would authorize twice.
func TestCardNetworkAnswerNeverInvitesARetry(t *testing.T) {
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 5)
	slow := e.cardsFunction(t, failingWith(e.cfg, func(in any) bool {
		g, ok := in.(*dynamodb.GetItemInput)
		if !ok {
			return false
		}
		sk, _ := g.Key["SK"].(*types.AttributeValueMemberS)
		return sk != nil && strings.HasPrefix(sk.Value, "CTX#")
	}, fmt.Errorf("injected: %w", context.DeadlineExceeded)))
	r := e.call(slow, token, "POST", "/sandbox/cards/"+cardID+"/authorizations", `{"amount":5,"merchant_name":"Shop","merchant_city":"Austin"}`)
	if r.status != 202 || r.str("data", "event_id") == "<nil>" {
		t.Fatalf("want 202 with the event id: %d %s", r.status, r.raw)
	}
	waittest.Until(t, 20*time.Second, "the authorization is applied, once", func() bool {
		return e.call(e.cards, token, "GET", "/cards/"+cardID+"?sync=false", "").str("data", "available_balance") == "15"
	})
	e.verifyCards(companyID)
}
