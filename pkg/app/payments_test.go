package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
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

	"payments/pkg/apidoc/apitest"
	"payments/pkg/fees"
	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/payoutworker"
	"payments/pkg/function/sweeper"
	"payments/pkg/function/walletsapi"
	"payments/pkg/httpapi"
	"payments/pkg/payments"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store"
	"payments/pkg/store/storetest"
	"payments/pkg/waittest"
	"payments/pkg/wallets"
)

// paymentsTestEnv is one table and real emulator queues with every function
// of this issue built by its production constructor: wallets, payments,
// admin, payout-worker and sweeper.
type paymentsTestEnv struct {
	*authTestEnv
	t        *testing.T
	sqs      *sqs.Client
	payouts  string // payouts queue URL
	webhooks string // webhooks queue URL
	wallets  function.HTTPHandler
	payments function.HTTPHandler
	worker   function.SQSHandler
}

func newPaymentsTestEnv(t *testing.T) *paymentsTestEnv {
	t.Helper()
	e := &paymentsTestEnv{authTestEnv: newAuthTestEnv(t), t: t, sqs: queuetest.Client(t)}
	e.payouts = queuetest.NewQueue(t, e.sqs, nil)
	e.webhooks = queuetest.NewQueue(t, e.sqs, nil)
	e.cfg.PayoutsQueueURL, e.cfg.WebhooksQueueURL = e.payouts, e.webhooks
	e.cfg.SQSEndpoint = os.Getenv("AWS_ENDPOINT_URL_SQS")
	ctx := context.Background()
	var err error
	if e.wallets, err = walletsapi.New(ctx, recording(e.cfg, "wallets")); err != nil {
		t.Fatal(err)
	}
	if e.payments, err = paymentsapi.New(ctx, recording(e.cfg, "payments")); err != nil {
		t.Fatal(err)
	}
	if e.worker, err = payoutworker.New(ctx, recording(e.cfg, "payout-worker")); err != nil {
		t.Fatal(err)
	}
	if e.authTestEnv.admin, err = adminapi.New(ctx, recording(e.cfg, "admin")); err != nil { // with the queue
		t.Fatal(err)
	}
	return e
}

// result is a decoded response.
type result struct {
	status  int
	body    map[string]any
	raw     string
	headers map[string]string
}

func (r result) data() map[string]any { d, _ := r.body["data"].(map[string]any); return d }

func (r result) items() []any { d, _ := r.body["data"].([]any); return d }

// str returns the value at path as text (numbers exactly as sent).
func (r result) str(path ...string) string {
	var v any = r.body
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return "<nil>"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// call sends one request to h as API Gateway would; target may carry a
// query string; headers may carry the admin key.
func (e *paymentsTestEnv) call(h function.HTTPHandler, token, method, target, body string, headers ...string) result {
	e.t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		e.t.Fatal(err)
	}
	path := httpapi.BasePath + u.Path
	req := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: method + " " + path, RawPath: path, RawQueryString: u.RawQuery,
		Headers: map[string]string{"content-type": "application/json"}, Body: body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			Stage: "$default", RequestID: uuid.NewString(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "198.51.100.9"},
		},
	}
	if token != "" {
		req.Headers["authorization"] = "Bearer " + token
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Headers[strings.ToLower(headers[i])] = headers[i+1]
	}
	resp, err := h(context.Background(), req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, target, err)
	}
	apitest.CheckEvent(e.t, req, resp, true)
	r := result{status: resp.StatusCode, raw: resp.Body, headers: resp.Headers}
	dec := json.NewDecoder(strings.NewReader(resp.Body))
	dec.UseNumber()
	if err := dec.Decode(&r.body); err != nil {
		e.t.Fatalf("%s %s: body %q: %v", method, target, resp.Body, err)
	}
	return r
}

func (e *paymentsTestEnv) admin(method, target, body string) result {
	e.t.Helper()
	return e.call(e.authTestEnv.admin, "", method, target, body, adminapi.KeyHeader, authTestAdminKey)
}

// company creates an APPROVED company with an XAF/CM wallet whose payout
// balance is funded with payout (major units, "" for none) and returns its
// id, a token and the wallet id.
func (e *paymentsTestEnv) company(payout string) (id, token, walletID string) {
	e.t.Helper()
	id, clientID, key := e.createCompany(e.t, "Acme "+uuid.NewString()[:6])
	if r := e.admin("PATCH", "/admin/companies/"+id, `{"kyb_status":"APPROVED"}`); r.status != 200 {
		e.t.Fatalf("approve: %s", r.raw)
	}
	token = e.mustToken(e.t, clientID, key)
	r := e.call(e.wallets, token, "POST", "/wallets", `{"currency":"XAF","country":"Cameroon","country_iso_code":"CM","country_phone_code":"+237"}`)
	if r.status != 201 {
		e.t.Fatalf("create wallet: %s", r.raw)
	}
	walletID = r.str("data", "id")
	if payout != "" {
		if r := e.admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":`+payout+`,"reference":"opening"}`); r.status != 200 {
			e.t.Fatalf("credit: %s", r.raw)
		}
	}
	return id, token, walletID
}

// wallet reads the wallet through GET /wallets.
func (e *paymentsTestEnv) wallet(token, id string) map[string]any {
	e.t.Helper()
	r := e.call(e.wallets, token, "GET", "/wallets", "")
	for _, it := range r.items() {
		if w := it.(map[string]any); w["id"] == id {
			return w
		}
	}
	e.t.Fatalf("wallet %s not listed: %s", id, r.raw)
	return nil
}

// pump plays Lambda's event source mapping for the payout worker: it
// receives batches from the payouts queue, invokes the worker's handler
// with them and deletes the messages it did not report, until done()
// holds or the time runs out.
func (e *paymentsTestEnv) pump(timeout time.Duration, done func() bool) {
	e.t.Helper()
	waittest.Until(e.t, timeout, "the payout worker is done", func() bool {
		if done() {
			return true
		}
		e.deliver()
		return false
	})
}

// deliver receives one batch from the payouts queue, if any, hands it to
// the worker and deletes the messages it did not report failed.
func (e *paymentsTestEnv) deliver() {
	e.t.Helper()
	ctx := context.Background()
	out, err := e.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(e.payouts), MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 30,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(out.Messages) == 0 {
		return
	}
	var ev events.SQSEvent
	for _, m := range out.Messages {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Attributes: m.Attributes, EventSource: "aws:sqs",
		})
	}
	resp, err := e.worker(ctx, ev)
	if err != nil {
		e.t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, m := range out.Messages {
		if !failed[aws.ToString(m.MessageId)] {
			e.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(e.payouts), ReceiptHandle: m.ReceiptHandle})
		}
	}
}

// refunds counts the REFUND ledger entries of payment id.
func (e *paymentsTestEnv) refunds(token, id string) int {
	e.t.Helper()
	n := 0
	for _, it := range e.call(e.wallets, token, "GET", "/wallet/transactions?type=REFUND", "").items() {
		if it.(map[string]any)["payment_id"] == id {
			n++
		}
	}
	return n
}

// status reads a payment's status.
func (e *paymentsTestEnv) status(token, id string) result {
	e.t.Helper()
	return e.call(e.payments, token, "GET", "/payment/transactions/"+id+"/status?includeUpstreamResponse=true", "")
}

func (e *paymentsTestEnv) verify(companyID string) {
	e.t.Helper()
	if err := wallets.VerifyLedger(context.Background(), store.NewWallets(e.db), companyID); err != nil {
		e.t.Fatalf("ledger invariant: %v", err)
	}
}

// TestPayoutsEndToEnd is the "done": a payout to a normal number is
// PENDING, then SUCCESS within seconds, and the payout balance drops by
// amount plus fee, as the wallet transactions show; one to a number ending
// in 000 ends FAILED with the money back.
func TestPayoutsEndToEnd(t *testing.T) {
	e := newPaymentsTestEnv(t)
	companyID, token, walletID := e.company("10000")
	body := func(phone, ext string) string {
		return fmt.Sprintf(`{"operator":"mtn","country":"CM","phone_number":%q,"amount":1000,"currency":"XAF","external_id":%q,`+
			`"notify_url":"https://merchant.example.com/notify","reference_id":"INV-1","lang":"fr","purpose":"Supplier"}`, phone, ext)
	}
	ok := e.call(e.payments, token, "POST", "/payment/payout", body("237670000001", "order-ok"))
	if ok.status != 200 || ok.str("data", "status") != "PENDING" || ok.str("data", "amount") != "1000" ||
		ok.str("data", "fee_amount") != "15" || ok.str("data", "error_message") != "<nil>" || ok.str("data", "external_id") != "order-ok" {
		t.Fatalf("payout: %s", ok.raw)
	}
	for _, k := range []string{"transaction_id", "external_id", "status", "amount", "currency", "operator", "country", "phone_number", "initiated_at", "error_message"} {
		if _, found := ok.data()[k]; !found {
			t.Errorf("initiation lacks %s: %s", k, ok.raw)
		}
	}
	bad := e.call(e.payments, token, "POST", "/payment/payout", body("237670000000", "order-bad"))
	if bad.status != 200 {
		t.Fatalf("payout: %s", bad.raw)
	}
	okID, badID := ok.str("data", "transaction_id"), bad.str("data", "transaction_id")
	w := e.wallet(token, walletID)
	if w["payout_balance"] != json.Number("10000") || w["payout_reserved"] != json.Number("2030") || w["payout_available"] != json.Number("7970") {
		t.Fatalf("wallet while pending: %v", w)
	}
	if r := e.status(token, okID); r.str("data", "status") != "PENDING" || r.str("data", "upstream") != "<nil>" {
		t.Fatalf("status while pending: %s", r.raw)
	}
	e.verify(companyID)

	start := time.Now()
	e.pump(20*time.Second, func() bool {
		return e.status(token, okID).str("data", "status") == "SUCCESS" && e.status(token, badID).str("data", "status") == "FAILED"
	})
	t.Logf("final after %v", time.Since(start))
	final := e.status(token, badID)
	if final.str("data", "error_message") != "recipient account not found" || !strings.Contains(final.str("data", "upstream"), "sandbox") {
		t.Fatalf("failed payout: %s", final.raw)
	}
	w = e.wallet(token, walletID)
	if w["payout_balance"] != json.Number("8985") || w["payout_reserved"] != json.Number("0") || w["payout_available"] != json.Number("8985") {
		t.Fatalf("wallet after: %v", w)
	}
	r := e.call(e.wallets, token, "GET", "/wallet/transactions/wallet/"+walletID, "")
	kinds := map[string]int{}
	for _, it := range r.items() {
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
	list := e.call(e.payments, token, "GET", "/payment/transactions?type=PAYOUT&status=SUCCESS", "")
	if list.status != 200 || len(list.items()) != 1 || list.str("meta", "total") != "1" || list.str("pagination", "limit") != "20" {
		t.Fatalf("list: %s", list.raw)
	}
	item := list.items()[0].(map[string]any)
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
	out, err := e.sqs.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(e.webhooks), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages},
	})
	if n, _ := strconv.Atoi(out.Attributes["ApproximateNumberOfMessages"]); err != nil || n < 6 {
		t.Errorf("webhooks queue holds %v (%v), want the 6 status updates at least", out.Attributes, err)
	}
	e.verify(companyID)
}

// TestSweeperResubmits accepts a payout with the payouts queue unreachable
// (the process that accepted it died before sending the submit): the
// sweeper, a minute later, sends it, and the worker settles it once.
func TestSweeperResubmits(t *testing.T) {
	e := newPaymentsTestEnv(t)
	companyID, token, walletID := e.company("1000")
	broken := e.cfg
	broken.PayoutsQueueURL = e.payouts + "-missing"
	h, err := paymentsapi.New(context.Background(), broken)
	if err != nil {
		t.Fatal(err)
	}
	r := e.call(h, token, "POST", "/payment/payout", `{"operator":"orange","country":"CM","phone_number":"237690000000","amount":100,"currency":"XAF"}`)
	if r.status != 200 {
		t.Fatalf("payout without its queue: %s", r.raw)
	}
	id := r.str("data", "transaction_id")
	if r.str("data", "external_id") != id {
		t.Errorf("generated external_id %s", r.str("data", "external_id"))
	}
	ahead := 61 * time.Second
	sweep := mustSweeper(t, recording(e.cfg, "sweeper"), func() time.Time { return time.Now().Add(ahead) })
	if _, err := sweep(context.Background(), events.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	e.pump(20*time.Second, func() bool { return e.status(token, id).str("data", "status") == "FAILED" })
	if w := e.wallet(token, walletID); w["payout_available"] != json.Number("1000") || w["payout_reserved"] != json.Number("0") {
		t.Fatalf("wallet %v", w)
	}
	// A sweep at the deadline finds nothing left to do.
	ahead = 16 * time.Minute
	if _, err := sweep(context.Background(), events.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	if n := e.refunds(token, id); n != 1 {
		t.Fatalf("%d refunds", n)
	}
	e.verify(companyID)
}

// TestPaymentsHTTPRefusals checks each 400 of POST /payment/payout and
// /payment/collect: the field named, and the spec's messages for the
// business refusals.
func TestPaymentsHTTPRefusals(t *testing.T) {
	e := newPaymentsTestEnv(t)
	companyID, token, _ := e.company("100")
	if r := e.call(e.payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":10,"currency":"XAF","external_id":"taken"}`); r.status != 200 {
		t.Fatalf("first payout: %s", r.raw)
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
			r := e.call(e.payments, token, "POST", tt.path, tt.body)
			if r.status != tt.status || (tt.code != "" && r.str("code") != tt.code) ||
				(tt.field != "" && (r.str("field") != tt.field || !strings.HasPrefix(r.str("message"), tt.field+":"))) ||
				(tt.msg != "" && r.str("message") != tt.msg) {
				t.Fatalf("%d %s", r.status, r.raw)
			}
		})
	}
	e.verify(companyID)
}

// TestPaymentQueriesHTTP checks the filters and their 400s, and that
// another company's transaction is not found, whatever skipCompanyCheck
// says.
func TestPaymentQueriesHTTP(t *testing.T) {
	e := newPaymentsTestEnv(t)
	_, token, _ := e.company("1000")
	_, other, _ := e.company("1000")
	r := e.call(e.payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":100,"currency":"XAF","external_id":"abc-123"}`)
	if r.status != 200 {
		t.Fatal(r.raw)
	}
	id := r.str("data", "transaction_id")
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
			r := e.call(e.payments, token, "GET", "/payment/transactions"+tt.query, "")
			if r.status != tt.status || (tt.status == 200 && len(r.items()) != tt.count) || (tt.field != "" && r.str("field") != tt.field) {
				t.Fatalf("%d %s", r.status, r.raw)
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
			r := e.call(e.payments, tt.token, "GET", "/payment/transactions/"+tt.target, "")
			if r.status != tt.status || (tt.code != "" && r.str("code") != tt.code) {
				t.Fatalf("%d %s", r.status, r.raw)
			}
			if tt.status == 200 && r.str("data", "transaction_id") != id {
				t.Fatalf("%s", r.raw)
			}
			if r.status == 404 && r.str("message") != "transaction not found" {
				t.Fatalf("%s", r.raw)
			}
		})
	}
	if r := e.call(e.payments, other, "GET", "/payment/transactions", ""); len(r.items()) != 0 {
		t.Fatalf("another company lists %s", r.raw)
	}
}

// TestFeesAndGuidelineRoutes checks the fee schedule console routes,
// POST /wallets/calculate-transfer-fees and GET /payment/guideline.
func TestFeesAndGuidelineRoutes(t *testing.T) {
	e := newPaymentsTestEnv(t)
	companyID, token, walletID := e.company("")
	quote := func(body string) result {
		return e.call(e.wallets, token, "POST", "/wallets/calculate-transfer-fees", body)
	}
	if r := e.admin("GET", "/admin/companies/"+companyID+"/fees", ""); r.status != 200 || r.data()["default"] != true || !hasRules(r, fees.Types...) ||
		!strings.Contains(r.raw, `{"type":"CARD_ISSUANCE","currency":"USD","fixed":1,"percent":0}`) {
		t.Fatalf("default schedule: %s", r.raw)
	}
	r := quote(`{"operator":"mtn","country":"CM","currency":"XAF","amount":1030}`)
	if r.status != 200 || r.str("data", "fee_amount") != "15" || r.str("data", "total_amount") != "1045" || r.str("data", "type") != "PAYOUT" {
		t.Fatalf("default quote: %s", r.raw)
	}
	put := `{"rules":[{"type":"PAYOUT","currency":"XAF","fixed":50,"percent":1},{"type":"PAYOUT","operator":"orange","country":"CM","currency":"XAF","fixed":0,"percent":2.5},{"type":"COLLECTION","percent":0.5}]}`
	if r := e.admin("PUT", "/admin/companies/"+companyID+"/fees", put); r.status != 200 || r.data()["default"] != false {
		t.Fatalf("put schedule: %s", r.raw)
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
			if r.status != tt.status || (tt.fee != "" && r.str("data", "fee_amount") != tt.fee) ||
				(tt.field != "" && r.str("field") != tt.field) || (tt.code != "" && r.str("code") != tt.code) {
				t.Fatalf("%d %s", r.status, r.raw)
			}
			if tt.code == "OPERATOR_UNAVAILABLE" && r.str("message") != "operator not available for this country and currency" {
				t.Fatalf("message %s", r.raw)
			}
		})
	}
	// The payout charges what the quote said.
	e.admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":5000,"reference":"top-up"}`)
	if r := e.call(e.payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":1000,"currency":"XAF"}`); r.str("data", "fee_amount") != "60" {
		t.Fatalf("payout fee: %s", r.raw)
	}
	for _, bad := range []struct{ id, body string }{
		{uuid.NewString(), put},
		{"nope", put},
	} {
		if r := e.admin("PUT", "/admin/companies/"+bad.id+"/fees", bad.body); r.status != 404 {
			t.Fatalf("unknown company: %s", r.raw)
		}
	}
	if r := e.admin("PUT", "/admin/companies/"+companyID+"/fees", `{"rules":[{"type":"PAYOUT","percent":101}]}`); r.status != 400 || r.str("field") != "rules[0].percent" {
		t.Fatalf("bad rule: %s", r.raw)
	}
	if r := e.admin("PUT", "/admin/companies/"+companyID+"/fees", `{"rules":[{"type":"CARD"}]}`); r.status != 400 || r.str("field") != "rules[0].type" {
		t.Fatalf("bad type: %s", r.raw)
	}
	cards := `{"rules":[{"type":"CARD_ISSUANCE","currency":"USD","fixed":2.5},{"type":"CARD_FUNDING","currency":"USD","percent":1},{"type":"CARD_WITHDRAWAL"}]}`
	if r := e.admin("PUT", "/admin/companies/"+companyID+"/fees", cards); r.status != 200 || r.data()["default"] != false ||
		!hasRules(r, fees.TypeCardIssuance, fees.TypeCardFunding, fees.TypeCardWithdrawal) {
		t.Fatalf("card rules: %s", r.raw)
	}
	g := e.call(e.payments, token, "GET", "/payment/guideline", "")
	if g.status != 200 || len(g.items()) != 13 {
		t.Fatalf("guideline: %s", g.raw)
	}
	first := g.items()[0].(map[string]any)
	if first["country_iso_code"] != "CM" || first["currency"] != "XAF" || fmt.Sprint(first["operators"]) != "[mtn orange]" {
		t.Fatalf("first row %v", first)
	}
	e.verify(companyID)
}

// hasRules reports whether the fee schedule of r has one rule of each of
// types, in that order, and no other.
func hasRules(r result, types ...string) bool {
	rules, _ := r.data()["rules"].([]any)
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
	e := newPaymentsTestEnv(t)
	companyID, token, walletID := e.company("100")
	var wg sync.WaitGroup
	statuses := make([]int, 40)
	for i := range statuses {
		wg.Go(func() {
			statuses[i] = e.call(e.payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":10,"currency":"XAF"}`).status
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
	if w := e.wallet(token, walletID); w["payout_available"] != json.Number("0") {
		t.Fatalf("wallet %v", w)
	}
	e.verify(companyID)
}

// TestProductionModeNeedsAnOperator: without an operator adapter the
// payments function serves reads but refuses payouts with 503, the worker
// refuses to start, and the sweeper runs.
func TestProductionModeNeedsAnOperator(t *testing.T) {
	cfg := function.Config{Mode: function.ModeProduction, TableName: "t", TokenSecret: authTestSecret, PayoutsQueueURL: "http://q", AWS: storetest.AWSConfig()}
	if _, err := paymentsapi.New(context.Background(), cfg); err != nil {
		t.Errorf("paymentsapi.New: %v", err)
	}
	if body, _ := function.Errors.Body(payments.ErrNoOperator); body.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("ErrNoOperator answers %d, want 503", body.StatusCode)
	}
	if _, err := payoutworker.New(context.Background(), cfg); err == nil {
		t.Error("payoutworker.New started without an operator")
	}
	cfg.Mode, cfg.PayoutsQueueURL = function.ModeSandbox, ""
	if _, err := payoutworker.New(context.Background(), cfg); err == nil {
		t.Error("payoutworker.New started without its queue")
	}
	if _, err := sweeper.New(context.Background(), function.Config{Mode: function.ModeProduction, TableName: "t", AWS: storetest.AWSConfig(), CardKey: testCardKey}); err != nil {
		t.Errorf("sweeper.New: %v", err)
	}
}
