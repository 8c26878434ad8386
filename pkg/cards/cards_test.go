package cards_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/app/apptest"
	"payments/pkg/cards"
	"payments/pkg/function/cardworker"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/schema"
	"payments/pkg/vault/vaulttest"
	"payments/pkg/wallets"
)

// TestCardLifecycle is the issue's walk: issue, read, reveal and its
// audit, fund, withdraw, freeze with a lock, unfreeze, terminate; the
// wallet and the card move as the ledger says, and no card number or CVV
// reaches a log line.
func TestCardLifecycle(t *testing.T) {
	logs := apptest.CaptureLogs(t)
	e := apptest.NewCardsTestEnv(t)
	companyID, token, walletID, customerID := e.CardCompany("100", "CM-7001")

	r := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","brand":"mastercard","amount":25}`)
	if r.Status != 201 || r.Str("data", "status") != "ACTIVE" || r.Str("data", "balance") != "25" || r.Str("data", "brand") != "MASTERCARD" {
		t.Fatalf("issue: %d %s", r.Status, r.Raw)
	}
	cardID := r.Str("data", "id")
	if got := e.Payout(token, walletID); got != "74" { // 100 − 25 − the 1.00 issuance fee
		t.Errorf("payout_balance %s after issuing, want 74", got)
	}
	masked, token1 := r.Str("data", "masked_pan"), r.Str("data", "number")
	if !strings.HasPrefix(masked, "**** **** **** ") || !strings.HasPrefix(token1, "tok_") {
		t.Errorf("masked_pan %q, number %q", masked, token1)
	}

	revealed := e.Call(e.Cards, token, "GET", "/cards/"+cardID+"?reveal=true", "", "User-Agent", "lifecycle-test")
	number, cvv := revealed.Str("data", "number"), revealed.Str("data", "cvv")
	if revealed.Status != 200 || !issuersandbox.ValidCardNumber(number) || len(number) != 16 || number[0] != '5' ||
		len(cvv) != 3 || number[12:] != masked[15:] {
		t.Fatalf("reveal: %d %s", revealed.Status, revealed.Raw)
	}
	if r := e.Call(e.Cards, token, "GET", "/cards/"+cardID, ""); r.Str("data", "number") != token1 || strings.Contains(r.Raw, number) {
		t.Errorf("a read without reveal shows %s", r.Raw)
	}
	e.Call(e.Cards, token, "GET", "/cards/"+cardID+"?reveal=true&sync=false", "")
	if r := e.Call(e.Cards, token, "GET", "/customers/"+customerID+"/cards", ""); len(r.Items()) != 1 ||
		r.Items()[0].(map[string]any)["masked_number"] != masked {
		t.Errorf("the customer's cards: %s", r.Raw)
	}
	_, other := e.ApprovedCompany()
	for _, target := range []string{"/cards/" + cardID, "/cards/" + cardID + "/reveals", "/customers/" + customerID + "/cards"} {
		if r := e.Call(e.Cards, other, "GET", target, ""); r.Status != 404 {
			t.Errorf("GET %s by another company: %d %s", target, r.Status, r.Raw)
		}
	}
	if r := e.Call(e.Cards, other, "POST", "/cards/"+cardID+"/fund", `{"amount":1}`); r.Status != 404 {
		t.Errorf("another company funds the card: %d %s", r.Status, r.Raw)
	}
	audit := e.Call(e.Cards, token, "GET", "/cards/"+cardID+"/reveals", "")
	if n := len(audit.Items()); n != 2 || audit.Str("pagination", "total") != "2" {
		t.Fatalf("reveal records: %s", audit.Raw)
	}
	first := audit.Items()[1].(map[string]any)
	if first["user_agent"] != "lifecycle-test" || first["source_ip"] != "198.51.100.9" || first["key_id"] != vaulttest.KeyARN {
		t.Errorf("first reveal record %v", first)
	}

	steps := []struct {
		name, method, target, body string
		status                     int
		check                      func(apptest.Result) bool
	}{
		{"fund", "POST", "/fund", `{"amount":10}`, 200, func(r apptest.Result) bool {
			return r.Str("data", "card_balance_before") == "25" && r.Str("data", "card_balance_after") == "35"
		}},
		{"fund below 1", "POST", "/fund", `{"amount":0.5}`, 400, nil},
		{"fund past the wallet", "POST", "/fund", `{"amount":65}`, 400, func(r apptest.Result) bool { return r.Str("message") == "insufficient wallet balance" }},
		{"withdraw", "POST", "/withdraw", `{"amount":5}`, 200, func(r apptest.Result) bool { return r.Str("data", "card_balance_after") == "30" }},
		{"withdraw past the card", "POST", "/withdraw", `{"amount":31}`, 400, func(r apptest.Result) bool { return r.Str("message") == "insufficient card balance" }},
		{"unfreeze an active card", "PUT", "/unfreeze", "", 400, func(r apptest.Result) bool { return r.Str("message") == "card not frozen" }},
		{"freeze with a lock", "PUT", "/freeze?lock=true", "", 200, func(r apptest.Result) bool {
			return r.Str("data", "card_status") == "FROZEN" && r.Str("data", "card_id") == cardID
		}},
		{"freeze again", "PUT", "/freeze", "", 400, func(r apptest.Result) bool { return r.Str("message") == "card already frozen" }},
		{"fund a frozen card", "POST", "/fund", `{"amount":1}`, 400, func(r apptest.Result) bool { return r.Str("message") == "card not active" }},
		{"withdraw from a frozen card", "POST", "/withdraw", `{"amount":1}`, 200, nil},
		{"unfreeze a locked card", "PUT", "/unfreeze", "", 400, func(r apptest.Result) bool { return r.Str("message") == "card is locked; unfreeze with unlock=true" }},
		{"unfreeze with unlock", "PUT", "/unfreeze?unlock=true", "", 200, func(r apptest.Result) bool { return r.Str("data", "card_status") == "ACTIVE" }},
		{"terminate", "POST", "/terminate", "", 200, func(r apptest.Result) bool { return r.Str("data", "refund_amount") == "29" }},
		{"terminate again", "POST", "/terminate", "", 400, func(r apptest.Result) bool { return r.Str("message") == "card terminated" }},
		{"fund a terminated card", "POST", "/fund", `{"amount":1}`, 400, func(r apptest.Result) bool { return r.Str("message") == "card terminated" }},
		{"freeze a terminated card", "PUT", "/freeze", "", 400, func(r apptest.Result) bool { return r.Str("message") == "card terminated" }},
		{"unfreeze a terminated card", "PUT", "/unfreeze", "", 400, func(r apptest.Result) bool { return r.Str("message") == "card terminated" }},
	}
	for _, s := range steps {
		r := e.Call(e.Cards, token, s.method, "/cards/"+cardID+s.target, s.body)
		if r.Status != s.status || (s.check != nil && !s.check(r)) {
			t.Fatalf("%s: %d %s", s.name, r.Status, r.Raw)
		}
	}
	// 74 − 10 (funding) + 5 + 1 (withdrawals) + 29 (termination refund)
	if got := e.Payout(token, walletID); got != "99" {
		t.Errorf("payout_balance %s at the end, want 99 (100 less the issuance fee)", got)
	}
	e.VerifyCards(companyID)

	var kinds []string
	for _, it := range e.Call(e.Webhooks, token, "GET", "/webhooks/events?limit=100", "").Items() {
		kinds = append(kinds, fmt.Sprint(it.(map[string]any)["event"]))
	}
	for _, want := range []string{"card.created", "card.fund", "transaction.funding.completed", "card.withdraw",
		"transaction.withdrawal.completed", "card.terminated", "transaction.terminated"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("no %s among the events %v", want, kinds)
		}
	}
	for _, line := range logs.Lines() {
		if strings.Contains(line, number) || strings.Contains(line, `"cvv":"`+cvv) {
			t.Fatalf("a log line shows the card's number or CVV: %s", line)
		}
	}
}

// TestIssueChecks: each refusal of POST /cards, in the issue's order, and a
// card the sandbox issuer declines: FAILED, with the fee and the funding
// back in the wallet.
func TestIssueChecks(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	companyID, token, walletID, customerID := e.CardCompany("10", "CM-7101")
	rejected := e.Enroll(token, e.Identity("rejected@example.com", "CM-7000"))
	declined := e.Enroll(token, e.Identity("declined@example.com", "CM-7999"))
	pendingReview := e.PendingReviewCustomer(companyID, "review@example.com", "CM-7103")
	_, bare := e.ApprovedCompany()
	bareCustomer := e.Enroll(bare, e.Identity("bare@example.com", "CM-7102")).Str("data", "id")
	tests := []struct {
		name, token, body string
		status            int
		message           string
	}{
		{"brand", token, `{"customer_id":"` + customerID + `","brand":"amex","amount":5}`, 400, "brand: must be VISA or MASTERCARD"},
		{"amount below 1", token, `{"customer_id":"` + customerID + `","amount":0.99}`, 400, ""},
		{"amount with 3 decimals", token, `{"customer_id":"` + customerID + `","amount":1.005}`, 400, ""},
		{"unknown customer", token, `{"customer_id":"0196c1d2-0000-7000-8000-000000000000","amount":5}`, 404, "customer not found"},
		{"another company's customer", bare, `{"customer_id":"` + customerID + `","amount":5}`, 404, "customer not found"},
		{"KYC rejected", token, `{"customer_id":"` + rejected.Str("data", "id") + `","amount":5}`, 400, "customer KYC not verified"},
		{"KYC pending review", token, `{"customer_id":"` + pendingReview + `","amount":5}`, 400, "customer KYC not verified"},
		{"no USD wallet", bare, `{"customer_id":"` + bareCustomer + `","amount":5}`, 400, "no USD wallet"},
		{"wallet short of the fee", token, `{"customer_id":"` + customerID + `","amount":9.5}`, 400, "insufficient wallet balance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Call(e.Cards, tt.token, "POST", "/cards", tt.body)
			if r.Status != tt.status || (tt.message != "" && r.Str("message") != tt.message) {
				t.Fatalf("%d %s, want %d %q", r.Status, r.Raw, tt.status, tt.message)
			}
		})
	}
	t.Run("declined by the issuer", func(t *testing.T) {
		r := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+declined.Str("data", "id")+`","amount":5}`)
		if r.Status != 201 || r.Str("data", "status") != "FAILED" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		if got := e.Payout(token, walletID); got != "10" {
			t.Errorf("payout_balance %s, want the 10 back", got)
		}
	})
	t.Run("no slots", func(t *testing.T) {
		if r := e.Admin("PATCH", "/admin/companies/"+companyID, `{"card_slots":1}`); r.Status != 200 {
			t.Fatal(r.Raw)
		}
		if r := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":1}`); r.Status != 201 {
			t.Fatalf("first card: %s", r.Raw)
		}
		r := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":1}`)
		if r.Status != 400 || r.Str("message") != "no card slots available" {
			t.Fatalf("%d %s", r.Status, r.Raw)
		}
		list := e.Call(e.Cards, token, "GET", "/cards", "")
		if list.Str("data", "statistics", "available_slots") != "0" || list.Str("data", "statistics", "failed") != "1" {
			t.Errorf("statistics %s", list.Raw)
		}
	})
	e.VerifyCards(companyID)
}

// TestConcurrentFundings sends 100 fundings of 10 USD at once against a
// wallet that covers exactly 50 of them.
func TestConcurrentFundings(t *testing.T) {
	if testing.Short() {
		t.Skip("needs DynamoDB Local: too slow on the in-memory one, which serves one request at a time (tens of seconds of contended writes): make test")
	}
	e := apptest.NewCardsTestEnv(t)
	companyID, token, walletID, customerID := e.CardCompany("521", "CM-7201") // 20 + 1 issuance, then 50 × 10
	card := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":20}`).Str("data", "id")
	statuses := make([]int, 100)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() { statuses[i] = e.Call(e.Cards, token, "POST", "/cards/"+card+"/fund", `{"amount":10}`).Status })
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[200] != 50 || count[400]+count[409] != 50 {
		t.Fatalf("statuses %v, want 50 × 200", count)
	}
	if got := e.Payout(token, walletID); got != "0" {
		t.Errorf("payout_balance %s, want 0", got)
	}
	if r := e.Call(e.Cards, token, "GET", "/cards/"+card+"?sync=false", ""); r.Str("data", "balance") != "520" {
		t.Errorf("card balance %s, want 520", r.Str("data", "balance"))
	}
	e.VerifyCards(companyID)
}

// TestConcurrentIssuances issues 10 cards at once against 3 free slots.
func TestConcurrentIssuances(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	companyID, token, _, customerID := e.CardCompany("1000", "CM-7301")
	if r := e.Admin("PATCH", "/admin/companies/"+companyID, `{"card_slots":3}`); r.Status != 200 {
		t.Fatal(r.Raw)
	}
	statuses := make([]int, 10)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":5}`).Status
		})
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[201] != 3 {
		t.Fatalf("statuses %v, want three 201", count)
	}
	e.VerifyCards(companyID)
}

// TestRevealWithoutAudit: when the audit record cannot be written, nothing
// is revealed.
func TestRevealWithoutAudit(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	_, token, _, customerID := e.CardCompany("50", "CM-7401")
	card := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":5}`).Str("data", "id")
	h := e.CardsFunction(t, apptest.Failing(e.Cfg, func(in any) bool {
		put, ok := in.(*dynamodb.PutItemInput)
		if !ok {
			return false
		}
		sk, _ := put.Item["SK"].(*types.AttributeValueMemberS)
		return sk != nil && strings.HasPrefix(sk.Value, schema.RevealSKPrefix(card))
	}))
	r := e.Call(h, token, "GET", "/cards/"+card+"?reveal=true", "")
	if r.Status != 503 || r.Str("code") != "REVEAL_NOT_AUDITED" || strings.Contains(r.Raw, `"cvv"`) {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
	if audit := e.Call(e.Cards, token, "GET", "/cards/"+card+"/reveals", ""); len(audit.Items()) != 0 {
		t.Errorf("records %s", audit.Raw)
	}
}

// TestRevealQuota: a company reveals its cards at most RevealLimit times an
// hour; the next reveal is 429 REVEAL_LIMIT_EXCEEDED with a Retry-After
// within the hour, reveals nothing and records no audit; another company's
// quota is its own.
func TestRevealQuota(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	cfg := e.Cfg
	cfg.RevealLimit = 3
	h := e.CardsFunction(t, cfg)
	_, token, _, customerID := e.CardCompany("50", "CM-7402")
	card := e.Call(h, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":5}`).Str("data", "id")
	for i := range cfg.RevealLimit {
		if r := e.Call(h, token, "GET", "/cards/"+card+"?reveal=true&sync=false", ""); r.Status != 200 || r.Str("data", "cvv") == "<nil>" {
			t.Fatalf("reveal %d: %d %s", i+1, r.Status, r.Raw)
		}
	}
	r := e.Send(h, token, "GET", "/cards/"+card+"?reveal=true&sync=false", "")
	wait, err := strconv.Atoi(r.Headers["Retry-After"])
	if r.StatusCode != 429 || !strings.Contains(r.Body, `"code":"REVEAL_LIMIT_EXCEEDED"`) || strings.Contains(r.Body, `"cvv"`) ||
		err != nil || wait < 1 || wait > 3600 {
		t.Fatalf("reveal past the quota: %d, Retry-After %q, %s", r.StatusCode, r.Headers["Retry-After"], r.Body)
	}
	if audit := e.Call(h, token, "GET", "/cards/"+card+"/reveals", ""); len(audit.Items()) != cfg.RevealLimit {
		t.Errorf("%d reveals recorded, want %d", len(audit.Items()), cfg.RevealLimit)
	}
	if r := e.Call(h, token, "GET", "/cards/"+card+"?sync=false", ""); r.Status != 200 {
		t.Errorf("a read without reveal: %d %s", r.Status, r.Raw)
	}
	_, other, _, otherCustomer := e.CardCompany("50", "CM-7403")
	otherCard := e.Call(h, other, "POST", "/cards", `{"customer_id":"`+otherCustomer+`","amount":5}`).Str("data", "id")
	if r := e.Call(h, other, "GET", "/cards/"+otherCard+"?reveal=true&sync=false", ""); r.Status != 200 {
		t.Errorf("another company's reveal: %d %s", r.Status, r.Raw)
	}
}

// TestSweeperFinishesCards: an issuance and a funding whose issuer calls
// failed stay open (the card PENDING, the funding PROCESSING, nothing
// refunded); the sweeper, a minute later, finishes both, once however often
// it runs.
func TestSweeperFinishesCards(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	companyID, token, walletID, customerID := e.CardCompany("100", "CM-7501")
	active := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":10}`).Str("data", "id")
	down := e.IssuerDown(t)
	pending := e.Call(down, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":20}`)
	if pending.Status != 201 || pending.Str("data", "status") != "PENDING" {
		t.Fatalf("issue with the issuer down: %s", pending.Raw)
	}
	if r := e.Call(down, token, "POST", "/cards/"+active+"/fund", `{"amount":5}`); r.Status != 502 || r.Str("code") != "CARD_ISSUER_UNAVAILABLE" {
		t.Fatalf("fund with the issuer down: %d %s", r.Status, r.Raw)
	}
	if got := e.Payout(token, walletID); got != "63" { // 100 − 11 − 21 − 5: the open movements keep their money
		t.Fatalf("payout_balance %s, want 63", got)
	}
	e.VerifyCards(companyID)
	sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return time.Now().Add(2 * time.Minute) })
	for range 2 {
		if _, err := sweep(context.Background(), events.EventBridgeEvent{}); err != nil {
			t.Fatal(err)
		}
	}
	if r := e.Call(e.Cards, token, "GET", "/cards/"+pending.Str("data", "id"), ""); r.Str("data", "status") != "ACTIVE" || r.Str("data", "balance") != "20" {
		t.Errorf("the pending card after the sweep: %s", r.Raw)
	}
	if r := e.Call(e.Cards, token, "GET", "/cards/"+active, ""); r.Str("data", "balance") != "15" {
		t.Errorf("the funded card after the sweep: %s", r.Raw)
	}
	e.VerifyCards(companyID)
}

// TestTerminateOnce sends the termination of a funded card twice at once:
// the wallet is credited exactly once.
func TestTerminateOnce(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	companyID, token, walletID, customerID := e.CardCompany("30", "CM-7601")
	card := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":20}`).Str("data", "id")
	statuses := make([]int, 2)
	var wg sync.WaitGroup
	for i := range statuses {
		wg.Go(func() { statuses[i] = e.Call(e.Cards, token, "POST", "/cards/"+card+"/terminate", `{}`).Status })
	}
	wg.Wait()
	if (statuses[0] == 200) == (statuses[1] == 200) {
		t.Fatalf("statuses %v, want one 200", statuses)
	}
	if got := e.Payout(token, walletID); got != "29" {
		t.Errorf("payout_balance %s, want 29 (credited once)", got)
	}
	e.VerifyCards(companyID)
	entries, err := moneystore.NewWallets(e.DB).AllTransactions(context.Background(), companyID)
	if err != nil {
		t.Fatal(err)
	}
	refunds := 0
	for _, en := range entries {
		if en.Type == wallets.TypeRefund {
			refunds++
		}
	}
	if refunds != 1 {
		t.Errorf("%d REFUND entries, want 1", refunds)
	}
}

// TestWithdrawalOfATerminatedCard: a withdrawal left open, then the card
// terminated (its remaining balance refunded), then the issuer refuses the
// withdrawal (the card is closed): its money goes to the wallet, not back
// to the terminated card.
func TestWithdrawalOfATerminatedCard(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	companyID, token, walletID, customerID := e.CardCompany("30", "CM-7701")
	card := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":20}`).Str("data", "id")
	if r := e.Call(e.IssuerDown(t), token, "POST", "/cards/"+card+"/withdraw", `{"amount":5}`); r.Status != 502 {
		t.Fatalf("withdraw with the issuer down: %d %s", r.Status, r.Raw)
	}
	if r := e.Call(e.Cards, token, "POST", "/cards/"+card+"/terminate", ""); r.Str("data", "refund_amount") != "15" {
		t.Fatalf("terminate: %s", r.Raw)
	}
	sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return time.Now().Add(2 * time.Minute) })
	if _, err := sweep(context.Background(), events.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	if got := e.Payout(token, walletID); got != "29" { // 30 − 21 + 15 + 5
		t.Errorf("payout_balance %s, want 29", got)
	}
	if r := e.Call(e.Cards, token, "GET", "/cards/"+card+"?sync=false", ""); r.Str("data", "balance") != "0" {
		t.Errorf("the terminated card holds %s", r.Str("data", "balance"))
	}
	e.VerifyCards(companyID)
}

// TestResumeLeavesASettledMovement: the sweeper's index lags; resuming a
// movement settled since changes nothing, at the issuer neither.
func TestResumeLeavesASettledMovement(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	companyID, token, _, customerID := e.CardCompany("30", "CM-7801")
	issued := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":20}`)
	card := issued.Str("data", "id")
	txs, err := moneystore.NewCards(e.DB).Transactions(context.Background(), companyID)
	if err != nil || len(txs) != 1 {
		t.Fatalf("transactions %v, %v", txs, err)
	}
	stale := txs[0]
	stale.Status = cards.TxProcessing // as the lagging index still shows it
	svc, err := testCards(e.Cfg, e.DB)
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Resume(context.Background(), stale); err != nil {
		t.Fatal(err)
	}
	r := e.Call(e.Cards, token, "GET", "/cards/"+card+"?includeRaw=true", "")
	if r.Str("data", "status") != "ACTIVE" || r.Str("data", "raw", "status") != "ACTIVE" || r.Str("data", "balance") != "20" {
		t.Errorf("after resuming a settled issuance: %s", r.Raw)
	}
	e.VerifyCards(companyID)
}

// TestIssuerTerminationAppliedOnce: the issuer terminates a card with 20
// USD on it and reports it; the notification reaches the card-worker three
// times (twice in one batch, once more later): the card is terminated and
// the wallet credited exactly once, with one card.terminated in the
// issuer's form. A notification about an unknown card is dropped; one that
// is not a notification fails its message.
func TestIssuerTerminationAppliedOnce(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	companyID, token, walletID, customerID := e.CardCompany("30", "CM-7901")
	cardID := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":20}`).Str("data", "id")
	card, err := moneystore.NewCards(e.DB).Card(context.Background(), companyID, cardID)
	if err != nil {
		t.Fatal(err)
	}
	worker, err := cardworker.New(context.Background(), apptest.Recording(e.Cfg, "card-worker"))
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"id":"evt_risk_1","type":"card.terminated","card_id":%q,"reference":%q,"reason":"risk block","created_at":"2026-11-23T10:00:00Z"}`,
		card.IssuerCardID, cardID)
	message := func(id, body string) events.SQSMessage {
		return events.SQSMessage{MessageId: id, Body: body, Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
	}
	batches := [][]events.SQSMessage{
		{message("m1", body), message("m2", body), message("m3", `{"id":"evt_2","type":"card.terminated","card_id":"card_x","reference":"0196d1e2-0000-7000-8000-00000000dead"}`)},
		{message("m4", body), message("m5", `not a notification`)},
	}
	var failed []string
	for _, b := range batches {
		resp, err := worker(context.Background(), events.SQSEvent{Records: b})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range resp.BatchItemFailures {
			failed = append(failed, f.ItemIdentifier)
		}
	}
	if !slices.Equal(failed, []string{"m5"}) {
		t.Errorf("failed messages %v, want only m5", failed)
	}
	if got := e.Payout(token, walletID); got != "29" { // 30 − 21 + 20, once
		t.Errorf("payout_balance %s, want 29", got)
	}
	if r := e.Call(e.Cards, token, "GET", "/cards/"+cardID+"?sync=false", ""); r.Str("data", "status") != "TERMINATED" || r.Str("data", "balance") != "0" {
		t.Errorf("card %s", r.Raw)
	}
	terminated := 0
	for _, it := range e.Call(e.Webhooks, token, "GET", "/webhooks/events?limit=100", "").Items() {
		ev := it.(map[string]any)
		if ev["event"] == "card.terminated" {
			terminated++
			if p, _ := ev["payload"].(map[string]any); p["reason"] != "provider_terminated" || p["previousBalance"] == nil {
				t.Errorf("card.terminated payload %v", p)
			}
		}
	}
	if terminated != 1 {
		t.Errorf("%d card.terminated events, want 1", terminated)
	}
	e.VerifyCards(companyID)
}

// TestCustomerCardsNotFound: GET /customers/{id}/cards tells an unknown
// customer (another company's included) from a customer of the company
// without cards, with the codes GET /customers/{id}/transactions uses for
// the first.
func TestCustomerCardsNotFound(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	_, token, _, customerID := e.CardCompany("", "CM-7301")
	_, _, _, othersCustomer := e.CardCompany("", "CM-7302")
	tests := []struct {
		name, customer, code string
	}{
		{"a customer without cards", customerID, "NO_CARDS"},
		{"an unknown customer", "0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d", "CUSTOMER_NOT_FOUND"},
		{"another company's customer", othersCustomer, "CUSTOMER_NOT_FOUND"},
		{"not a customer id", "customer-1", "CUSTOMER_NOT_FOUND"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Call(e.Cards, token, "GET", "/customers/"+tt.customer+"/cards", "")
			if r.Status != 404 || r.Str("code") != tt.code {
				t.Fatalf("%d %s, want 404 %s", r.Status, r.Raw, tt.code)
			}
			if tt.code != "CUSTOMER_NOT_FOUND" {
				return
			}
			if tx := e.Call(e.Cards, token, "GET", "/customers/"+tt.customer+"/transactions", ""); tx.Status != 404 || tx.Str("code") != tt.code {
				t.Fatalf("its transactions: %d %s, want 404 %s", tx.Status, tx.Raw, tt.code)
			}
		})
	}
}

// TestSandboxRevealSession: in sandbox mode POST /cards/{id}/reveal-sessions
// answers a simulated session, the sealed number, CVV and expiry as
// GET /cards/{id}?reveal=true shows them, audited as that reveal and
// counted against the same hourly quota (a session past it is 429
// REVEAL_LIMIT_EXCEEDED); frozen and terminated cards reveal as that reveal
// does; a missing or empty nonce is 400 naming nonce (no body, naming
// body, as every route's); a card not issued
// (FAILED) is 400 CARD_NOT_ACTIVE; another company's card is 404.
func TestSandboxRevealSession(t *testing.T) {
	logs := apptest.CaptureLogs(t)
	e := apptest.NewCardsTestEnv(t)
	cfg := e.Cfg
	cfg.RevealLimit = 6
	h := e.CardsFunction(t, cfg)
	_, token, _, customerID := e.CardCompany("50", "CM-7404")
	card := e.Call(h, token, "POST", "/cards", `{"customer_id":"`+customerID+`","amount":5}`).Str("data", "id")
	revealed := e.Call(h, token, "GET", "/cards/"+card+"?reveal=true&sync=false", "")
	number, cvv := revealed.Str("data", "number"), revealed.Str("data", "cvv")
	if revealed.Status != 200 || len(number) != 16 {
		t.Fatalf("reveal: %d %s", revealed.Status, revealed.Raw)
	}
	_, failToken, _, failCustomer := e.CardCompany("50", "CM-7999") // the sandbox issuer refuses …999
	failed := e.Call(h, failToken, "POST", "/cards", `{"customer_id":"`+failCustomer+`","amount":5}`)
	if failed.Str("data", "status") != "FAILED" {
		t.Fatalf("issue to …999: %s", failed.Raw)
	}
	_, other := e.ApprovedCompany()

	tests := []struct {
		name, token, card, body string
		status                  int
		code, field             string
	}{
		{"a session", token, card, `{"nonce":"ephkn_pub_1"}`, 201, "", ""},
		{"no body", token, card, ``, 400, "INVALID_FIELD", "body"},
		{"no nonce", token, card, `{}`, 400, "INVALID_FIELD", "nonce"},
		{"an empty nonce", token, card, `{"nonce":"  "}`, 400, "INVALID_FIELD", "nonce"},
		{"an unknown field", token, card, `{"nonce":"n","card":"x"}`, 400, "INVALID_FIELD", ""},
		{"another company's card", other, card, `{"nonce":"n"}`, 404, "CARD_NOT_FOUND", ""},
		{"a card never issued", failToken, failed.Str("data", "id"), `{"nonce":"n"}`, 400, "CARD_NOT_ACTIVE", ""},
		{"a frozen card", token, card, `{"nonce":"ephkn_pub_2"}`, 201, "", ""},
		{"a terminated card", token, card, `{"nonce":"ephkn_pub_3"}`, 201, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			switch tt.name {
			case "a frozen card":
				e.Call(h, token, "PUT", "/cards/"+card+"/freeze", "")
			case "a terminated card":
				e.Call(h, token, "POST", "/cards/"+card+"/terminate", "")
			}
			r := e.Call(h, tt.token, "POST", "/cards/"+tt.card+"/reveal-sessions", tt.body)
			if r.Status != tt.status || (tt.code != "" && r.Str("code") != tt.code) || (tt.field != "" && r.Str("field") != tt.field) {
				t.Fatalf("%d %s, want %d %s %s", r.Status, r.Raw, tt.status, tt.code, tt.field)
			}
			if tt.status != 201 {
				if strings.Contains(r.Raw, number) {
					t.Errorf("a refusal shows the number: %s", r.Raw)
				}
				return
			}
			if r.Str("data", "issuer") != "sandbox" || r.Str("data", "card_id") != card || r.Str("data", "number") != number ||
				r.Str("data", "cvv") != cvv || r.Str("data", "expiry_year") != revealed.Str("data", "expiry_year") ||
				r.Str("data", "ephemeral_key_secret") != "<nil>" {
				t.Errorf("session %s", r.Raw)
			}
		})
	}
	// The reveal and three sessions are recorded; two more reach the
	// quota of 6, and the next is refused and not recorded.
	if audit := e.Call(h, token, "GET", "/cards/"+card+"/reveals", ""); len(audit.Items()) != 4 {
		t.Errorf("%d reveals recorded, want 4: %s", len(audit.Items()), audit.Raw)
	}
	for i := range 2 {
		if r := e.Call(h, token, "POST", "/cards/"+card+"/reveal-sessions", `{"nonce":"n"}`); r.Status != 201 {
			t.Fatalf("session %d: %d %s", i, r.Status, r.Raw)
		}
	}
	r := e.Send(h, token, "POST", "/cards/"+card+"/reveal-sessions", `{"nonce":"n"}`)
	if r.StatusCode != 429 || !strings.Contains(r.Body, `"code":"REVEAL_LIMIT_EXCEEDED"`) || r.Headers["Retry-After"] == "" ||
		strings.Contains(r.Body, number) || r.Headers["Cache-Control"] != "no-store" {
		t.Fatalf("a session past the quota: %d %v %s", r.StatusCode, r.Headers, r.Body)
	}
	if audit := e.Call(h, token, "GET", "/cards/"+card+"/reveals", ""); len(audit.Items()) != 6 {
		t.Errorf("%d reveals recorded, want 6", len(audit.Items()))
	}
	if all := strings.Join(logs.Lines(), "\n"); strings.Contains(all, number) || strings.Contains(all, "ephkn_pub_1") {
		t.Error("a log line shows the card number or the nonce")
	}
}
