package cards_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/app/apptest"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/function"
	"payments/pkg/function/cardnetwork"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/httpapi"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store/schema"
	"payments/pkg/waittest"
)

// TestCardNetworkRoutes drives the card-network sandbox through the
// card-network function's routes: each answers 201 with the card
// transaction it made (an authorization's decided in the request; what
// follows once the card-worker has applied it).
func TestCardNetworkRoutes(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 5)
	post := func(target, body string) apptest.Result {
		t.Helper()
		return e.Call(e.Network, token, "POST", target, body)
	}
	created := func(r apptest.Result, typ, status, amount string) string {
		t.Helper()
		if r.Status != 201 || r.Str("data", "type") != typ || r.Str("data", "status") != status || r.Str("data", "amount") != amount ||
			r.Str("data", "category") != "CARD" || r.Str("data", "card", "id") != cardID || r.Str("data", "customer", "id") == "<nil>" {
			t.Fatalf("want 201 %s %s %s: %d %s", typ, status, amount, r.Status, r.Raw)
		}
		return r.Str("data", "id")
	}

	auth := created(post("/sandbox/cards/"+cardID+"/authorizations",
		`{"amount":12.5,"merchant_name":"Book Shop","merchant_city":"Lyon","merchant_country":"fr"}`), "AUTHORIZATION", "PENDING", "12.5")
	if r := e.Call(e.Cards, token, "GET", "/cards/"+cardID+"?sync=false", ""); r.Str("data", "balance") != "20" || r.Str("data", "available_balance") != "7.5" {
		t.Errorf("card while 12.50 is held: %s", r.Raw)
	}
	settled := post("/sandbox/card-transactions/"+auth+"/settle", `{"amount":10}`)
	created(settled, "SETTLEMENT", "SUCCESS", "10")
	if settled.Str("data", "original_transaction_id") != auth || settled.Str("data", "merchant", "country") != "FR" {
		t.Errorf("settlement %s", settled.Raw)
	}
	// 2.5 % of 10.00 + 0.50: a CROSS-BORDER transaction of 0.75.
	r := e.Call(e.Cards, token, "GET", "/cards/"+cardID+"/transactions?type=CROSS-BORDER", "")
	if items := r.Items(); len(items) != 1 || fmt.Sprint(items[0].(map[string]any)["amount"]) != "0.75" {
		t.Errorf("cross-border transactions %s", r.Raw)
	}
	if r := e.Call(e.Cards, token, "GET", "/cards/"+cardID+"?sync=false", ""); r.Str("data", "balance") != "9.25" || r.Str("data", "available_balance") != "9.25" {
		t.Errorf("card after the settlement: %s", r.Raw)
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
		{"settle a settlement", "/sandbox/card-transactions/" + settled.Str("data", "id") + "/settle", ``, 400, "NOT_AN_AUTHORIZATION", ""},
		{"reverse part of a settled one", "/sandbox/card-transactions/" + auth + "/reverse", `{"amount":1}`, 400, "ALREADY_SETTLED", ""},
		{"expire a settled one", "/sandbox/card-transactions/" + auth + "/expire", ``, 400, "ALREADY_SETTLED", ""},
		{"expire with an amount", "/sandbox/card-transactions/" + auth + "/expire", `{"amount":1}`, 400, "INVALID_FIELD", "body"},
		{"settle with final, a refund", "/sandbox/card-transactions/" + auth + "/refund", `{"amount":1,"final":true}`, 400, "INVALID_FIELD", "final"},
		{"capture without an amount", "/sandbox/cards/" + cardID + "/captures", `{"merchant_name":"A","merchant_city":"B"}`, 400, "INVALID_FIELD", "amount"},
		{"capture without a merchant", "/sandbox/cards/" + cardID + "/captures", `{"amount":1,"merchant_city":"B"}`, 400, "INVALID_FIELD", "merchant_name"},
		{"capture with a type", "/sandbox/cards/" + cardID + "/captures", `{"amount":1,"merchant_name":"A","merchant_city":"B","type":"AUTHORIZATION"}`, 400, "INVALID_FIELD", "type"},
		{"refund without an amount", "/sandbox/cards/" + cardID + "/refunds", `{}`, 400, "INVALID_FIELD", "amount"},
		{"refund of nothing", "/sandbox/cards/" + cardID + "/refunds", `{"amount":0}`, 400, "INVALID_FIELD", "amount"},
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
		if r.Status != c.status || r.Str("code") != c.code || c.field != "" && r.Str("field") != c.field {
			t.Errorf("%s: %d %s, want %d %s %s", c.name, r.Status, r.Raw, c.status, c.code, c.field)
		}
	}

	if v := post("/sandbox/cards/"+cardID+"/authorizations", `{"merchant_name":"Hotel Akwa","merchant_city":"Douala","type":"VERIFICATION"}`); v.Status != 201 ||
		v.Str("data", "status") != "SUCCESS" || v.Str("data", "amount") != "0" || v.Str("data", "hold_amount") != "0" {
		t.Errorf("verification: %s", v.Raw)
	}
	if n := e.eventCount(token, "card.verification.completed"); n != 1 {
		t.Errorf("%d card.verification.completed events, want 1", n)
	}
	if r := e.Call(e.Cards, token, "PUT", "/cards/"+cardID+"/freeze", ""); r.Status != 200 {
		t.Fatalf("freeze: %s", r.Raw)
	}
	declined := post("/sandbox/cards/"+cardID+"/authorizations", `{"amount":1,"merchant_name":"Kiosk","merchant_city":"Austin"}`)
	created(declined, "DECLINE", "FAILED", "1")
	if declined.Str("data", "decline_reason") != "card_frozen" || declined.Str("data", "fee_amount") != "0.5" {
		t.Errorf("decline: %s", declined.Raw)
	}

	// Another company sees none of it.
	_, other, _, _ := e.CardCompany("", "CM-9001")
	if r := e.Call(e.Network, other, "POST", "/sandbox/cards/"+cardID+"/authorizations", `{"amount":1,"merchant_name":"A","merchant_city":"B"}`); r.Status != 404 {
		t.Errorf("another company's card: %d %s", r.Status, r.Raw)
	}
	if r := e.Call(e.Network, other, "POST", "/sandbox/card-transactions/"+auth+"/refund", ``); r.Status != 404 || r.Str("code") != "TRANSACTION_NOT_FOUND" {
		t.Errorf("another company's transaction: %d %s", r.Status, r.Raw)
	}

	term := post("/sandbox/cards/"+cardID+"/terminate", `{"reason":"risk block"}`)
	created(term, "TERMINATION", "SUCCESS", "12.75") // 9.25 + 4.00 refunded − 0.50 of the decline's fee
	if r := e.Call(e.Cards, token, "GET", "/cards/"+cardID+"?sync=false", ""); r.Str("data", "status") != "TERMINATED" {
		t.Errorf("card after the issuer's termination: %s", r.Raw)
	}
	if r := post("/sandbox/cards/"+cardID+"/terminate", ``); r.Status != 400 || r.Str("code") != "CARD_TERMINATED" {
		t.Errorf("terminating twice: %d %s", r.Status, r.Raw)
	}
	// A purchase on the terminated card is declined; its fee, which the
	// card cannot pay, comes from the USD wallet.
	if r := post("/sandbox/cards/"+cardID+"/authorizations", `{"amount":1,"merchant_name":"Kiosk","merchant_city":"Austin"}`); r.Status != 201 ||
		r.Str("data", "type") != "DECLINE" || r.Str("data", "decline_reason") != "card_terminated" || r.Str("data", "fee_amount") != "0.5" {
		t.Errorf("a purchase on the terminated card: %d %s", r.Status, r.Raw)
	}
	e.VerifyCards(companyID)
}

// TestCardNetworkSandboxOnly: in production mode the sandbox routes do not
// exist.
func TestCardNetworkSandboxOnly(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	_, token, _, cardID := e.fundedCard(5, 0)
	cfg := e.Cfg
	cfg.Mode = function.ModeProduction
	prod := e.CardNetworkFunction(t, cfg)
	if r := e.Call(prod, token, "POST", "/sandbox/cards/"+cardID+"/authorizations", `{"amount":1,"merchant_name":"A","merchant_city":"B"}`); r.Status != 404 {
		t.Errorf("a sandbox route in production: %d %s", r.Status, r.Raw)
	}
}

// TestCardNetworkQueued: with no card-worker running, an authorization is
// answered 201 at once, decided in the request; a settlement the
// card-worker has not applied within the sandbox's wait is answered 202
// with its event id.
func TestCardNetworkQueued(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(5, 0)
	cfg := e.Cfg
	cfg.IssuerEventsQueueURL = queuetest.NewQueue(t, queuetest.Client(t), nil) // no worker reads it
	svc, err := testCards(cfg, e.DB)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := testCardNetwork(cfg, e.DB, svc)
	if err != nil {
		t.Fatal(err)
	}
	sb.Wait = 50 * time.Millisecond
	guard, err := tokenkeys.Guard(context.Background(), cfg, e.DB, e.Caches.Companies)
	if err != nil {
		t.Fatal(err)
	}
	rt := httpapi.NewRouter(cardnetwork.Errors, guard)
	cardshttp.SandboxRoutes(rt, sb)
	h := function.HTTP(rt)
	r := e.Call(h, token, "POST", "/sandbox/cards/"+cardID+"/authorizations", `{"amount":1,"merchant_name":"A","merchant_city":"B"}`)
	if r.Status != 201 || r.Str("data", "type") != "AUTHORIZATION" || r.Str("data", "hold_amount") != "1" {
		t.Fatalf("an authorization with no worker: %d %s", r.Status, r.Raw)
	}
	r = e.Call(h, token, "POST", "/sandbox/card-transactions/"+r.Str("data", "id")+"/settle", "")
	if r.Status != 202 || r.Str("data", "event_id") == "<nil>" {
		t.Fatalf("a settlement no worker applied: %d %s", r.Status, r.Raw)
	}
	if _, found, err := svc.Store.Outcome(context.Background(), companyID, r.Str("data", "event_id")); err != nil || found {
		t.Errorf("the queued notification was applied (%v, %v)", found, err)
	}
}

// TestCardNetworkAnswerNeverInvitesARetry: once the network's notification
// is sent, a table too slow to read its outcome or its transaction answers
// 202 with the event id (read the card's transactions), never 503: these
// routes take no Idempotency-Key, and a retry would authorize twice.
func TestCardNetworkAnswerNeverInvitesARetry(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 5)
	slow := e.CardNetworkFunction(t, apptest.FailingWith(e.Cfg, func(in any) bool {
		g, ok := in.(*dynamodb.GetItemInput)
		if !ok {
			return false
		}
		sk, _ := g.Key["SK"].(*types.AttributeValueMemberS)
		return sk != nil && strings.HasPrefix(sk.Value, schema.CardTxSKPrefix)
	}, fmt.Errorf("injected: %w", context.DeadlineExceeded)))
	r := e.Call(slow, token, "POST", "/sandbox/cards/"+cardID+"/authorizations", `{"amount":5,"merchant_name":"Shop","merchant_city":"Austin"}`)
	if r.Status != 202 || r.Str("data", "event_id") == "<nil>" {
		t.Fatalf("want 202 with the event id: %d %s", r.Status, r.Raw)
	}
	waittest.Until(t, 20*time.Second, "the authorization is applied, once", func() bool {
		return e.Call(e.Cards, token, "GET", "/cards/"+cardID+"?sync=false", "").Str("data", "available_balance") == "15"
	})
	e.VerifyCards(companyID)
}

// TestCardNetworkStandsIn: through the card-network function, a decision
// that fails (its first read of the card's company, injected) leaves the
// network to decline on its own: the route answers 201 with the DECLINE
// (issuer_timeout, no fee) its advice recorded, and the card holds nothing.
func TestCardNetworkStandsIn(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 5)
	var once sync.Once
	h := e.CardNetworkFunction(t, apptest.FailingWith(e.Cfg, func(in any) bool {
		g, ok := in.(*dynamodb.GetItemInput)
		if !ok {
			return false
		}
		pk, _ := g.Key["PK"].(*types.AttributeValueMemberS)
		failed := false
		if pk != nil && strings.HasPrefix(pk.Value, schema.CardRefPKPrefix) {
			once.Do(func() { failed = true })
		}
		return failed
	}, errors.New("injected: the table is unavailable")))
	r := e.Call(h, token, "POST", "/sandbox/cards/"+cardID+"/authorizations", `{"amount":5,"merchant_name":"Shop","merchant_city":"Austin"}`)
	if r.Status != 201 || r.Str("data", "type") != "DECLINE" || r.Str("data", "decline_reason") != "issuer_timeout" || r.Str("data", "fee_amount") != "0" {
		t.Fatalf("want 201 with the network's decline: %d %s", r.Status, r.Raw)
	}
	if c := e.Call(e.Cards, token, "GET", "/cards/"+cardID+"?sync=false", ""); c.Str("data", "available_balance") != "20" {
		t.Errorf("the card after the network's decline: %s", c.Raw)
	}
	e.VerifyCards(companyID)
}

// TestCardNetworkKeys: the sandbox routes take Idempotency-Key as every
// route that moves money does. A keyed request whose answer was lost (the
// function died before storing it: here, the write of the answer fails)
// is sent again once its lease ends: the network acts again under the id
// the first run recorded on the key, which is applied once, and the retry
// answers what the first made. Each route makes one transaction, however
// often it is sent.
func TestCardNetworkKeys(t *testing.T) {
	t.Parallel()
	e := newNetworkEnv(t)
	companyID, token, _, cardID := e.fundedCard(20, 5)
	// The function that dies before storing its answer: the key stays in
	// progress, with the effect its run recorded.
	lost := e.CardNetworkFunction(t, apptest.Failing(e.Cfg, func(in any) bool {
		u, ok := in.(*dynamodb.UpdateItemInput)
		return ok && strings.HasPrefix(*u.UpdateExpression, "SET response_status")
	}))
	send := func(h function.HTTPHandler, key, target, body string) apptest.Result {
		t.Helper()
		return e.Call(h, token, "POST", target, body, "Idempotency-Key", key)
	}
	again := func(key, target, body string, first apptest.Result) {
		t.Helper()
		e.EndLease(companyID, key)
		r := send(e.Network, key, target, body)
		if r.Status != first.Status || r.Str("data", "id") != first.Str("data", "id") || r.Headers["Idempotent-Replayed"] != "true" {
			t.Errorf("%s sent again: %d %s, want %d %s", target, r.Status, r.Raw, first.Status, first.Raw)
		}
	}
	count := func(typ string) int {
		t.Helper()
		return len(e.Call(e.Cards, token, "GET", "/cards/"+cardID+"/transactions?limit=100&type="+typ, "").Items())
	}

	authorize := `{"amount":3,"merchant_name":"Shop","merchant_city":"Austin"}`
	first := send(lost, "auth-1", "/sandbox/cards/"+cardID+"/authorizations", authorize)
	if first.Status != 201 || first.Str("data", "type") != "AUTHORIZATION" {
		t.Fatalf("authorization: %d %s", first.Status, first.Raw)
	}
	again("auth-1", "/sandbox/cards/"+cardID+"/authorizations", authorize, first)
	auth := first.Str("data", "id")
	// A second authorization, refunded in part once settled.
	second := send(e.Network, "auth-2", "/sandbox/cards/"+cardID+"/authorizations", authorize).Str("data", "id")
	for _, c := range []struct {
		key, target, body string
	}{
		{"settle-1", "/sandbox/card-transactions/" + auth + "/settle", `{"amount":2}`},
		{"reverse-2", "/sandbox/card-transactions/" + second + "/reverse", ``},
		{"refund-1", "/sandbox/card-transactions/" + auth + "/refund", `{"amount":1}`},
	} {
		first := send(lost, c.key, c.target, c.body)
		if first.Status != 201 {
			t.Fatalf("%s: %d %s", c.target, first.Status, first.Raw)
		}
		again(c.key, c.target, c.body, first)
	}
	for typ, want := range map[string]int{"AUTHORIZATION": 2, "SETTLEMENT": 1, "REVERSAL": 1, "REFUND": 1} {
		if got := count(typ); got != want {
			t.Errorf("%d %s transactions, want %d", got, typ, want)
		}
	}
	// 20 − 2 (settled) + 1 (refunded), nothing held.
	if r := e.Call(e.Cards, token, "GET", "/cards/"+cardID+"?sync=false", ""); r.Str("data", "balance") != "19" || r.Str("data", "available_balance") != "19" {
		t.Errorf("the card: %s", r.Raw)
	}
	// Answered 503 before the network acted (the card could not be
	// read), a keyed request releases its key: its retry runs, once.
	throttled := e.CardNetworkFunction(t, apptest.FailingWith(e.Cfg, func(in any) bool {
		g, ok := in.(*dynamodb.GetItemInput)
		if !ok {
			return false
		}
		sk, _ := g.Key["SK"].(*types.AttributeValueMemberS)
		return sk != nil && sk.Value == schema.CardSK(cardID)
	}, &types.ProvisionedThroughputExceededException{Message: new(string)}))
	if r := send(throttled, "auth-3", "/sandbox/cards/"+cardID+"/authorizations", authorize); r.Status != 503 {
		t.Fatalf("authorization, the card unreadable: %d %s", r.Status, r.Raw)
	}
	if r := send(e.Network, "auth-3", "/sandbox/cards/"+cardID+"/authorizations", authorize); r.Status != 201 || r.Headers["Idempotent-Replayed"] == "true" {
		t.Errorf("its retry: %d %s, want it run", r.Status, r.Raw)
	}
	if got := count("AUTHORIZATION"); got != 3 {
		t.Errorf("%d authorizations, want 3", got)
	}
	first = send(lost, "end-1", "/sandbox/cards/"+cardID+"/terminate", `{}`)
	if first.Status != 201 || first.Str("data", "type") != "TERMINATION" {
		t.Fatalf("terminate: %d %s", first.Status, first.Raw)
	}
	again("end-1", "/sandbox/cards/"+cardID+"/terminate", `{}`, first)
	if got := count("TERMINATION"); got != 1 {
		t.Errorf("%d terminations, want 1", got)
	}
	e.VerifyCards(companyID)
}
