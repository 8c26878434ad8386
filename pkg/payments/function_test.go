package payments_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"payments/pkg/app/apptest"
	"payments/pkg/fees"
	"payments/pkg/function"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/payoutworker"
	"payments/pkg/function/sweeper"
	"payments/pkg/payments"
	"payments/pkg/store/storetest"
)

// TestPayoutsEndToEnd is the "done": a payout to a normal number is
// PENDING, then SUCCESS within seconds, and the payout balance drops by
// amount plus fee, as the wallet transactions show; one to a number ending
// in 000 ends FAILED with the money back.
func TestPayoutsEndToEnd(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, walletID := e.Company("10000")
	body := func(phone, ext string) string {
		return fmt.Sprintf(`{"operator":"mtn","country":"CM","phone_number":%q,"amount":1000,"currency":"XAF","external_id":%q,`+
			`"notify_url":"https://merchant.example.com/notify","reference_id":"INV-1","lang":"fr","purpose":"Supplier"}`, phone, ext)
	}
	ok := e.Call(e.Payments, token, "POST", "/payment/payout", body("237670000001", "order-ok"))
	if ok.Status != 200 || ok.Str("data", "status") != "PENDING" || ok.Str("data", "amount") != "1000" ||
		ok.Str("data", "fee_amount") != "15" || ok.Str("data", "error_message") != "<nil>" || ok.Str("data", "external_id") != "order-ok" {
		t.Fatalf("payout: %s", ok.Raw)
	}
	for _, k := range []string{"transaction_id", "external_id", "status", "amount", "currency", "operator", "country", "phone_number", "initiated_at", "error_message"} {
		if _, found := ok.Data()[k]; !found {
			t.Errorf("initiation lacks %s: %s", k, ok.Raw)
		}
	}
	bad := e.Call(e.Payments, token, "POST", "/payment/payout", body("237670000000", "order-bad"))
	if bad.Status != 200 {
		t.Fatalf("payout: %s", bad.Raw)
	}
	okID, badID := ok.Str("data", "transaction_id"), bad.Str("data", "transaction_id")
	w := e.Wallet(token, walletID)
	if w["payout_balance"] != json.Number("10000") || w["payout_reserved"] != json.Number("2030") || w["payout_available"] != json.Number("7970") {
		t.Fatalf("wallet while pending: %v", w)
	}
	if r := e.Status(token, okID); r.Str("data", "status") != "PENDING" || r.Str("data", "upstream") != "<nil>" {
		t.Fatalf("status while pending: %s", r.Raw)
	}
	e.Verify(companyID)

	start := time.Now()
	e.Pump(20*time.Second, func() bool {
		return e.Status(token, okID).Str("data", "status") == "SUCCESS" && e.Status(token, badID).Str("data", "status") == "FAILED"
	})
	t.Logf("final after %v", time.Since(start))
	final := e.Status(token, badID)
	if final.Str("data", "error_message") != "recipient account not found" || !strings.Contains(final.Str("data", "upstream"), "sandbox") {
		t.Fatalf("failed payout: %s", final.Raw)
	}
	w = e.Wallet(token, walletID)
	if w["payout_balance"] != json.Number("8985") || w["payout_reserved"] != json.Number("0") || w["payout_available"] != json.Number("8985") {
		t.Fatalf("wallet after: %v", w)
	}
	r := e.Call(e.Wallets, token, "GET", "/wallet/transactions/wallet/"+walletID, "")
	kinds := map[string]int{}
	for _, it := range r.Items() {
		tx := it.(map[string]any)
		kinds[fmt.Sprint(tx["type"], " ", tx["status"])]++
		if tx["payment_id"] == okID && tx["type"] == "WITHDRAW" &&
			(tx["wallet_balance_before"] != json.Number("10000") || tx["wallet_balance_after"] != json.Number("8985") || tx["amount_with_fee"] != json.Number("1015")) {
			t.Errorf("settled entry %v", tx)
		}
	}
	if kinds["WITHDRAW SUCCESS"] != 1 || kinds["WITHDRAW FAILED"] != 1 || kinds["REFUND SUCCESS"] != 1 || kinds["FUND SUCCESS"] != 1 {
		t.Fatalf("wallet transactions %v", kinds)
	}
	list := e.Call(e.Payments, token, "GET", "/payment/transactions?type=PAYOUT&status=SUCCESS", "")
	if list.Status != 200 || len(list.Items()) != 1 || list.Str("meta", "total") != "1" || list.Str("pagination", "limit") != "20" {
		t.Fatalf("list: %s", list.Raw)
	}
	item := list.Items()[0].(map[string]any)
	for _, k := range []string{"transaction_id", "external_id", "status", "type", "amount", "fee_amount", "currency", "operator", "country",
		"phone_number", "reason", "description", "created_at", "updated_at", "error_message"} {
		if _, found := item[k]; !found {
			t.Errorf("transaction lacks %s: %v", k, item)
		}
	}
	if item["description"] != "Supplier" || item["error_message"] != nil {
		t.Errorf("transaction %v", item)
	}
	// Each transition was published to the webhooks queue.
	out, err := e.Sqs.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(e.Webhooks), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages},
	})
	if n, _ := strconv.Atoi(out.Attributes["ApproximateNumberOfMessages"]); err != nil || n < 6 {
		t.Errorf("webhooks queue holds %v (%v), want the 6 status updates at least", out.Attributes, err)
	}
	e.Verify(companyID)
}

// TestSweeperResubmits accepts a payout with the payouts queue unreachable
// (the process that accepted it died before sending the submit): the
// sweeper, a minute later, sends it, and the worker settles it once.
func TestSweeperResubmits(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, walletID := e.Company("1000")
	broken := e.Cfg
	broken.PayoutsQueueURL = e.Payouts + "-missing"
	h, err := paymentsapi.New(context.Background(), broken)
	if err != nil {
		t.Fatal(err)
	}
	r := e.Call(h, token, "POST", "/payment/payout", `{"operator":"orange","country":"CM","phone_number":"237690000000","amount":100,"currency":"XAF"}`)
	if r.Status != 200 {
		t.Fatalf("payout without its queue: %s", r.Raw)
	}
	id := r.Str("data", "transaction_id")
	if r.Str("data", "external_id") != id {
		t.Errorf("generated external_id %s", r.Str("data", "external_id"))
	}
	ahead := 61 * time.Second
	sweep := apptest.MustSweeper(t, apptest.Recording(e.Cfg, "sweeper"), func() time.Time { return time.Now().Add(ahead) })
	if _, err := sweep(context.Background(), events.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	e.Pump(20*time.Second, func() bool { return e.Status(token, id).Str("data", "status") == "FAILED" })
	if w := e.Wallet(token, walletID); w["payout_available"] != json.Number("1000") || w["payout_reserved"] != json.Number("0") {
		t.Fatalf("wallet %v", w)
	}
	// A sweep at the deadline finds nothing left to do.
	ahead = 16 * time.Minute
	if _, err := sweep(context.Background(), events.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	if n := e.Refunds(token, id); n != 1 {
		t.Fatalf("%d refunds", n)
	}
	e.Verify(companyID)
}

// TestPaymentsHTTPRefusals checks each 400 of POST /payment/payout and
// /payment/collect: the field named, and the spec's messages for the
// business refusals.
func TestPaymentsHTTPRefusals(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, _ := e.Company("100")
	if r := e.Call(e.Payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":10,"currency":"XAF","external_id":"taken"}`); r.Status != 200 {
		t.Fatalf("first payout: %s", r.Raw)
	}
	valid := map[string]any{"operator": "mtn", "country": "CM", "phone_number": "237670000001", "amount": 10, "currency": "XAF"}
	with := func(kv ...any) string {
		m := map[string]any{}
		for k, v := range valid {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	tests := []struct {
		name, path, body string
		status           int
		code, field, msg string
	}{
		{"insufficient including fees", "/payment/payout", with("amount", 90), 400, "INSUFFICIENT_BALANCE", "", "insufficient balance including fees"},
		{"duplicate external_id", "/payment/payout", with("external_id", "taken"), 400, "DUPLICATE_EXTERNAL_ID", "", "duplicate external_id"},
		{"no wallet", "/payment/payout", with("country", "SN", "currency", "XOF", "phone_number", "221770000001", "operator", "orange"), 400, "NO_WALLET", "", "no wallet for this country and currency"},
		{"operator unavailable", "/payment/payout", with("operator", "airtel"), 400, "OPERATOR_UNAVAILABLE", "", "operator not available for this country and currency"},
		{"operator uppercase", "/payment/payout", with("operator", "MTN"), 400, "INVALID_FIELD", "operator", ""},
		{"operator missing", "/payment/payout", with("operator", nil), 400, "INVALID_FIELD", "operator", ""},
		{"country lowercase", "/payment/payout", with("country", "cm"), 400, "INVALID_FIELD", "country", ""},
		{"phone with plus", "/payment/payout", with("phone_number", "+237670000001"), 400, "INVALID_FIELD", "phone_number", ""},
		{"phone a number", "/payment/payout", with("phone_number", 237670000001), 400, "INVALID_FIELD", "phone_number", ""},
		{"amount below 1", "/payment/payout", with("amount", 0.5), 400, "INVALID_FIELD", "amount", ""},
		{"amount decimals", "/payment/payout", with("amount", 10.5), 400, "INVALID_FIELD", "amount", ""},
		{"amount a string", "/payment/payout", with("amount", "10"), 400, "INVALID_FIELD", "amount", ""},
		{"amount missing", "/payment/payout", with("amount", nil), 400, "INVALID_FIELD", "amount", ""},
		{"currency unknown", "/payment/payout", with("currency", "EUR"), 400, "INVALID_FIELD", "currency", ""},
		{"external_id too long", "/payment/payout", with("external_id", strings.Repeat("x", 256)), 400, "INVALID_FIELD", "external_id", ""},
		{"notify_url http", "/payment/payout", with("notify_url", "http://merchant.example.com"), 400, "INVALID_FIELD", "notify_url", ""},
		{"lang", "/payment/payout", with("lang", "french"), 400, "INVALID_FIELD", "lang", ""},
		{"reason is not a payout field", "/payment/payout", with("reason", "x"), 400, "INVALID_FIELD", "reason", ""},
		{"unknown field", "/payment/payout", with("fee", 1), 400, "INVALID_FIELD", "fee", ""},
		{"malformed", "/payment/payout", `{"operator":`, 400, "INVALID_FIELD", "body", ""},
		{"collect phone a number", "/payment/collect", with("phone_number", 237670000001), 400, "INVALID_FIELD", "phone_number", ""},
		{"collect amount a string", "/payment/collect", with("amount", "10"), 400, "INVALID_FIELD", "amount", ""},
		{"collect reason too long", "/payment/collect", with("reason", strings.Repeat("x", 256)), 400, "INVALID_FIELD", "reason", ""},
		{"collect duplicate", "/payment/collect", with("external_id", "taken"), 400, "DUPLICATE_EXTERNAL_ID", "", "duplicate external_id"},
		{"collect ok", "/payment/collect", with("reason", "Order 1", "operator", "orange", "phone_number", "237690000002"), 200, "", "", "Collection initiated successfully"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Call(e.Payments, token, "POST", tt.path, tt.body)
			if r.Status != tt.status || (tt.code != "" && r.Str("code") != tt.code) ||
				(tt.field != "" && (r.Str("field") != tt.field || !strings.HasPrefix(r.Str("message"), tt.field+":"))) ||
				(tt.msg != "" && r.Str("message") != tt.msg) {
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
		})
	}
	e.Verify(companyID)
}

// TestPaymentQueriesHTTP checks the filters and their 400s, and that
// another company's transaction is not found, whatever skipCompanyCheck
// says.
func TestPaymentQueriesHTTP(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	_, token, _ := e.Company("1000")
	_, other, _ := e.Company("1000")
	r := e.Call(e.Payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":100,"currency":"XAF","external_id":"abc-123"}`)
	if r.Status != 200 {
		t.Fatal(r.Raw)
	}
	id := r.Str("data", "transaction_id")
	day := time.Now().UTC().Format(time.DateOnly)
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	tests := []struct {
		query  string
		status int
		count  int
		field  string
	}{
		{"", 200, 1, ""},
		{"?external_id=c-12", 200, 1, ""},
		{"?external_id=zzz", 200, 0, ""},
		{"?status=PENDING&type=PAYOUT", 200, 1, ""},
		{"?type=COLLECTION", 200, 0, ""},
		{"?from_date=" + day + "&to_date=" + tomorrow, 200, 1, ""},
		{"?to_date=" + day, 200, 0, ""},
		{"?page=2", 200, 0, ""},
		{"?status=pending", 400, 0, "status"},
		{"?type=REFUND", 400, 0, "type"},
		{"?from_date=today", 400, 0, "from_date"},
		{"?to_date=2025-02-30", 400, 0, "to_date"},
		{"?limit=101", 400, 0, "limit"},
		{"?page=0", 400, 0, "page"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := e.Call(e.Payments, token, "GET", "/payment/transactions"+tt.query, "")
			if r.Status != tt.status || (tt.status == 200 && len(r.Items()) != tt.count) || (tt.field != "" && r.Str("field") != tt.field) {
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
		})
	}
	statusTests := []struct {
		token, target string
		status        int
		code          string
	}{
		{token, id + "/status", 200, ""},
		{token, id + "/status?doubleCheck=true&includeUpstreamResponse=true&skipCompanyCheck=true", 200, ""},
		{other, id + "/status", 404, "PAYMENT_NOT_FOUND"},
		{other, id + "/status?skipCompanyCheck=true", 404, "PAYMENT_NOT_FOUND"},
		{token, "not-a-uuid/status", 404, "PAYMENT_NOT_FOUND"},
		{token, uuid.NewString() + "/status", 404, "PAYMENT_NOT_FOUND"},
		{token, id + "/status?doubleCheck=maybe", 400, "INVALID_FIELD"},
		{"", id + "/status", 401, "UNAUTHORIZED"},
	}
	for _, tt := range statusTests {
		t.Run(tt.target, func(t *testing.T) {
			r := e.Call(e.Payments, tt.token, "GET", "/payment/transactions/"+tt.target, "")
			if r.Status != tt.status || (tt.code != "" && r.Str("code") != tt.code) {
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
			if tt.status == 200 && r.Str("data", "transaction_id") != id {
				t.Fatalf("%s", r.Raw)
			}
			if r.Status == 404 && r.Str("message") != "transaction not found" {
				t.Fatalf("%s", r.Raw)
			}
		})
	}
	if r := e.Call(e.Payments, other, "GET", "/payment/transactions", ""); len(r.Items()) != 0 {
		t.Fatalf("another company lists %s", r.Raw)
	}
}

// TestFeesAndGuidelineRoutes checks the fee schedule console routes,
// POST /wallets/calculate-transfer-fees and GET /payment/guideline.
func TestFeesAndGuidelineRoutes(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, walletID := e.Company("")
	quote := func(body string) apptest.Result {
		return e.Call(e.Wallets, token, "POST", "/wallets/calculate-transfer-fees", body)
	}
	if r := e.Admin("GET", "/admin/companies/"+companyID+"/fees", ""); r.Status != 200 || r.Data()["default"] != true || !hasRules(r, fees.Types...) ||
		!strings.Contains(r.Raw, `{"type":"CARD_ISSUANCE","currency":"USD","fixed":1,"percent":0}`) {
		t.Fatalf("default schedule: %s", r.Raw)
	}
	r := quote(`{"operator":"mtn","country":"CM","currency":"XAF","amount":1030}`)
	if r.Status != 200 || r.Str("data", "fee_amount") != "15" || r.Str("data", "total_amount") != "1045" || r.Str("data", "type") != "PAYOUT" {
		t.Fatalf("default quote: %s", r.Raw)
	}
	put := `{"rules":[{"type":"PAYOUT","currency":"XAF","fixed":50,"percent":1},{"type":"PAYOUT","operator":"orange","country":"CM","currency":"XAF","fixed":0,"percent":2.5},{"type":"COLLECTION","percent":0.5}]}`
	if r := e.Admin("PUT", "/admin/companies/"+companyID+"/fees", put); r.Status != 200 || r.Data()["default"] != false {
		t.Fatalf("put schedule: %s", r.Raw)
	}
	tests := []struct {
		name, body string
		status     int
		fee, field string
		code       string
	}{
		{"fixed plus percent", `{"operator":"mtn","country":"CM","currency":"XAF","amount":1000}`, 200, "60", "", ""},
		{"most specific rule", `{"operator":"orange","country":"CM","currency":"XAF","amount":1000}`, 200, "25", "", ""},
		{"collection", `{"type":"COLLECTION","operator":"orange","country":"CM","currency":"XAF","amount":1000}`, 200, "5", "", ""},
		{"operator not served", `{"operator":"wave","country":"CM","currency":"XAF","amount":1000}`, 400, "", "", "OPERATOR_UNAVAILABLE"},
		{"no rule for the currency", `{"operator":"orange","country":"SN","currency":"XOF","amount":1000}`, 400, "", "", "NO_FEE_RULE"},
		{"bad amount", `{"operator":"mtn","country":"CM","currency":"XAF","amount":0.5}`, 400, "", "amount", ""},
		{"bad type", `{"type":"REFUND","operator":"mtn","country":"CM","currency":"XAF","amount":1}`, 400, "", "type", ""},
		{"unknown field", `{"operator":"mtn","country":"CM","currency":"XAF","amount":1,"x":1}`, 400, "", "x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := quote(tt.body)
			if r.Status != tt.status || (tt.fee != "" && r.Str("data", "fee_amount") != tt.fee) ||
				(tt.field != "" && r.Str("field") != tt.field) || (tt.code != "" && r.Str("code") != tt.code) {
				t.Fatalf("%d %s", r.Status, r.Raw)
			}
			if tt.code == "OPERATOR_UNAVAILABLE" && r.Str("message") != "operator not available for this country and currency" {
				t.Fatalf("message %s", r.Raw)
			}
		})
	}
	// The payout charges what the quote said.
	e.Admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":5000,"reference":"top-up"}`)
	if r := e.Call(e.Payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":1000,"currency":"XAF"}`); r.Str("data", "fee_amount") != "60" {
		t.Fatalf("payout fee: %s", r.Raw)
	}
	for _, bad := range []struct{ id, body string }{
		{uuid.NewString(), put},
		{"nope", put},
	} {
		if r := e.Admin("PUT", "/admin/companies/"+bad.id+"/fees", bad.body); r.Status != 404 {
			t.Fatalf("unknown company: %s", r.Raw)
		}
	}
	if r := e.Admin("PUT", "/admin/companies/"+companyID+"/fees", `{"rules":[{"type":"PAYOUT","percent":101}]}`); r.Status != 400 || r.Str("field") != "rules[0].percent" {
		t.Fatalf("bad rule: %s", r.Raw)
	}
	if r := e.Admin("PUT", "/admin/companies/"+companyID+"/fees", `{"rules":[{"type":"CARD"}]}`); r.Status != 400 || r.Str("field") != "rules[0].type" {
		t.Fatalf("bad type: %s", r.Raw)
	}
	cards := `{"rules":[{"type":"CARD_ISSUANCE","currency":"USD","fixed":2.5},{"type":"CARD_FUNDING","currency":"USD","percent":1},{"type":"CARD_WITHDRAWAL"}]}`
	if r := e.Admin("PUT", "/admin/companies/"+companyID+"/fees", cards); r.Status != 200 || r.Data()["default"] != false ||
		!hasRules(r, fees.TypeCardIssuance, fees.TypeCardFunding, fees.TypeCardWithdrawal) {
		t.Fatalf("card rules: %s", r.Raw)
	}
	g := e.Call(e.Payments, token, "GET", "/payment/guideline", "")
	if g.Status != 200 || len(g.Items()) != 13 {
		t.Fatalf("guideline: %s", g.Raw)
	}
	first := g.Items()[0].(map[string]any)
	if first["country_iso_code"] != "CM" || first["currency"] != "XAF" || fmt.Sprint(first["operators"]) != "[mtn orange]" {
		t.Fatalf("first row %v", first)
	}
	e.Verify(companyID)
}

// hasRules reports whether the fee schedule of r has one rule of each of
// types, in that order, and no other.
func hasRules(r apptest.Result, types ...string) bool {
	rules, _ := r.Data()["rules"].([]any)
	if len(rules) != len(types) {
		return false
	}
	for i, rule := range rules {
		if m, _ := rule.(map[string]any); m["type"] != types[i] {
			return false
		}
	}
	return true
}

// TestConcurrentPayoutsHTTP sends payouts through the function's handler at
// once: the reservation admits exactly what the balance covers.
func TestConcurrentPayoutsHTTP(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, walletID := e.Company("100")
	var wg sync.WaitGroup
	statuses := make([]int, 40)
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = e.Call(e.Payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":10,"currency":"XAF"}`).Status
		})
	}
	wg.Wait()
	counts := map[int]int{}
	for _, s := range statuses {
		counts[s]++
	}
	if counts[200] != 10 || counts[400] != 30 {
		t.Fatalf("statuses %v", counts)
	}
	if w := e.Wallet(token, walletID); w["payout_available"] != json.Number("0") {
		t.Fatalf("wallet %v", w)
	}
	e.Verify(companyID)
}

// TestProductionModeNeedsAnOperator: without an operator adapter the
// payments function serves reads but refuses payouts with 503, the worker
// refuses to start, and the sweeper runs (given the card issuer's key).
func TestProductionModeNeedsAnOperator(t *testing.T) {
	t.Parallel()
	cfg := function.Config{Mode: function.ModeProduction, TableName: "t", TokenKeys: apptest.AuthTestKeys, PayoutsQueueURL: "http://q", AWS: storetest.AWSConfig(),
		CompanyLimits: apptest.GenerousLimits}
	if _, err := paymentsapi.New(context.Background(), cfg); err != nil {
		t.Errorf("paymentsapi.New: %v", err)
	}
	if body, _ := paymentsapi.Errors.Body(payments.ErrNoOperator); body.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("ErrNoOperator answers %d, want 503", body.StatusCode)
	}
	if _, err := payoutworker.New(context.Background(), cfg); err == nil {
		t.Error("payoutworker.New started without an operator")
	}
	cfg.Mode, cfg.PayoutsQueueURL = function.ModeSandbox, ""
	if _, err := payoutworker.New(context.Background(), cfg); err == nil {
		t.Error("payoutworker.New started without its queue")
	}
	// The sweeper asks the card issuer again about card movements: it
	// needs the issuer's key, not an operator.
	sweeperCfg := function.Config{Mode: function.ModeProduction, TableName: "t", AWS: storetest.AWSConfig(), CardKey: apptest.TestCardKey,
		WebhookKey: apptest.TestWebhookKey}
	if _, err := sweeper.New(context.Background(), sweeperCfg); err == nil {
		t.Error("sweeper.New started without the card issuer's key")
	}
	sweeperCfg.IssuerAPIKey = apptest.StripeTestKey
	if _, err := sweeper.New(context.Background(), sweeperCfg); err != nil {
		t.Errorf("sweeper.New: %v", err)
	}
}
