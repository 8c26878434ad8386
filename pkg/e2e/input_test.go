package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"

	"payments/pkg/apidoc/apitest"
	"payments/pkg/app/apptest"
	"payments/pkg/customers"
	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/authapi"
	"payments/pkg/function/base"
	"payments/pkg/function/cardnetwork"
	"payments/pkg/function/cardsapi"
	"payments/pkg/function/customersapi"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/walletsapi"
	"payments/pkg/function/webhooksapi"
	"payments/pkg/httpapi"
	"payments/pkg/identity/cognitopool/cognitotest"
	"payments/pkg/outbound"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store/storetest"
)

// inputEnv is one table and real emulator queues with every HTTP function
// built by its production constructor, and one APPROVED company with a
// token, an XAF wallet funded with 1,000,000 and one payout. It serves the
// bad-input tests and the fuzz targets (it takes a testing.TB for them).
type inputEnv struct {
	auth, admin, wallets, payments, webhooks, customers, cards, network function.HTTPHandler

	companyID, clientID, token, walletID, paymentID string

	// routes maps each route of template.yaml to its function's handler.
	routes map[string]function.HTTPHandler

	ips atomic.Int64 // source addresses handed out, one per request
}

func newInputEnv(tb testing.TB) *inputEnv {
	tb.Helper()
	db := storetest.NewDB(tb)
	sqsClient := queuetest.Client(tb)
	cfg := function.Config{
		Mode:             function.ModeSandbox,
		TableName:        db.Table,
		AuditTableName:   storetest.NewDB(tb).Table,
		DynamoDBEndpoint: storetest.Endpoint(tb),
		SQSEndpoint:      os.Getenv("AWS_ENDPOINT_URL_SQS"),
		PayoutsQueueURL:  queuetest.NewQueue(tb, sqsClient, nil),
		WebhooksQueueURL: queuetest.NewQueue(tb, sqsClient, nil),
		AWS:              storetest.AWSConfig(),
		TokenKeys:        apptest.AuthTestKeys,
		// The card-network sandbox's notifications go nowhere: its
		// routes' bodies are read before anything is asked of it.
		IssuerEventsQueueURL: queuetest.NewQueue(tb, sqsClient, nil),
		IssuerWebhookSecret:  apptest.IssuerTestSecret,
		FundsQueueURL:        queuetest.NewQueue(tb, sqsClient, nil),
		AdminAPIKey:          apptest.AuthTestAdminKey,
		TokenTTL:             time.Hour,
		TokenRateLimit:       10,
		RevealLimit:          100,
		CompanyLimits:        apptest.GenerousLimits,
		DocumentsBucket:      storetest.NewBucket(tb),
		S3Endpoint:           storetest.S3Endpoint(tb),
		CognitoEndpoint:      cognitotest.Endpoint(tb),
		CardKey:              apptest.TestCardKey,
		WebhookKey:           apptest.TestWebhookKey,
		DashboardSessionKey:  apptest.DashboardTestKey,
		// A batch's chunk jobs; no worker takes them here.
		BulkPayoutsQueueURL: queuetest.NewQueue(tb, sqsClient, nil),
	}
	pool := cognitotest.NewResources(tb)
	cfg.UserPoolID, cfg.UserPoolClientID = pool.PoolID, pool.ClientID
	e := &inputEnv{}
	ctx := context.Background()
	for _, f := range []struct {
		h   *function.HTTPHandler
		new func(context.Context, function.Config) (function.HTTPHandler, error)
	}{
		{&e.auth, authapi.New}, {&e.admin, adminapi.New}, {&e.wallets, walletsapi.New}, {&e.payments, paymentsapi.New}, {&e.webhooks, webhooksapi.New},
		{&e.cards, cardsapi.New}, {&e.network, cardnetwork.New},
	} {
		h, err := f.new(ctx, cfg)
		if err != nil {
			tb.Fatal(err)
		}
		*f.h = h
	}
	// Document URLs an input may name are fetched for a second at most.
	caches := base.NewCaches(time.Now)
	h, err := customersapi.NewWith(context.Background(), cfg, caches, customers.NewFetcher(outbound.WithTimeout(time.Second)), time.Now)
	if err != nil {
		tb.Fatal(err)
	}
	e.customers = h
	e.routes = templateHandlers(tb, cfg, caches, map[string]function.HTTPHandler{
		"auth": e.auth, "admin": e.admin, "wallets": e.wallets, "payments": e.payments, "webhooks": e.webhooks,
		"customers": e.customers, "cards": e.cards, "card-network": e.network,
	})

	var created struct {
		Data struct {
			ID        string `json:"id"`
			ClientID  string `json:"client_id"`
			ClientKey string `json:"client_key"`
		} `json:"data"`
	}
	e.mustDecode(tb, e.mustCall(tb, e.admin, "POST", "/admin/companies", `{"name":"Fuzz Ltd","kyb_status":"APPROVED"}`, 201), &created)
	e.companyID, e.clientID = created.Data.ID, created.Data.ClientID
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	body := fmt.Sprintf(`{"client_id":%q,"client_key":%q}`, created.Data.ClientID, created.Data.ClientKey)
	e.mustDecode(tb, e.mustCall(tb, e.auth, "POST", "/auth/token", body, 200), &tok)
	e.token = tok.AccessToken
	var item struct {
		Data struct {
			ID            string `json:"id"`
			TransactionID string `json:"transaction_id"`
		} `json:"data"`
	}
	wallet := `{"currency":"XAF","country":"Cameroon","country_iso_code":"CM","country_phone_code":"+237"}`
	e.mustDecode(tb, e.mustCall(tb, e.wallets, "POST", "/wallets", wallet, 201), &item)
	e.walletID = item.Data.ID
	e.mustCall(tb, e.admin, "POST", "/admin/wallets/"+e.walletID+"/credit", `{"balance":"payout","amount":1000000,"reference":"input-funding"}`, 200)
	payout := `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":100,"currency":"XAF"}`
	e.mustDecode(tb, e.mustCall(tb, e.payments, "POST", "/payment/payout", payout, 200), &item)
	e.paymentID = item.Data.TransactionID
	return e
}

// event builds the API Gateway event of a request with the company's token
// (or, under /admin, the admin key), from a source address of its own so
// that the token endpoint's rate limit never answers. target may carry a
// raw query string, used as is.
func (e *inputEnv) event(method, target, body string) events.APIGatewayV2HTTPRequest {
	path, query, _ := strings.Cut(target, "?")
	path = httpapi.BasePath + path
	n := e.ips.Add(1)
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: method + " " + path, RawPath: path, RawQueryString: query,
		Headers: map[string]string{"content-type": "application/json"}, Body: body,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			Stage: "$default", RequestID: uuid.NewString(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: method, Path: path, Protocol: "HTTP/1.1", UserAgent: "test",
				SourceIP: fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255),
			},
		},
	}
	switch {
	case strings.HasPrefix(target, "/admin/"):
		ev.Headers["x-admin-key"] = apptest.AuthTestAdminKey
	case !strings.HasPrefix(target, "/auth/"):
		ev.Headers["authorization"] = "Bearer " + e.token
	}
	return ev
}

// to returns the handler of the function template.yaml wires to the
// operation of the document that serves method on target; tb fails when no
// operation or no function does.
func (e *inputEnv) to(tb testing.TB, method, target string) function.HTTPHandler {
	tb.Helper()
	op, ok := apitest.Default(tb).Find(method, target)
	if !ok {
		tb.Fatalf("%s %.200s: no operation of the document serves it", method, target)
	}
	h := e.routes[op.String()]
	if h == nil {
		tb.Fatalf("%s: no function of template.yaml serves it", op)
	}
	return h
}

// fill returns path, as the document writes it, with the ids of the
// set-up: the payout for a transactionId or batchId (no batch has it), the
// wallet for any other id (no card, customer or event has it).
func (e *inputEnv) fill(path string) string {
	for strings.Contains(path, "{") {
		i, j := strings.Index(path, "{"), strings.Index(path, "}")
		id := e.walletID
		if name := path[i+1 : j]; name == "transactionId" || name == "batchId" {
			id = e.paymentID
		}
		path = path[:i] + url.PathEscape(id) + path[j+1:]
	}
	return path
}

// mustCall sends a request during set-up and fails tb unless it answers
// want.
func (e *inputEnv) mustCall(tb testing.TB, h function.HTTPHandler, method, target, body string, want int) string {
	tb.Helper()
	res, err := h(context.Background(), e.event(method, target, body))
	if err != nil || res.StatusCode != want {
		tb.Fatalf("%s %s: %d %s %v, want %d", method, target, res.StatusCode, res.Body, err, want)
	}
	return res.Body
}

func (e *inputEnv) mustDecode(tb testing.TB, body string, v any) {
	tb.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		tb.Fatalf("body %q: %v", body, err)
	}
}

// Check sends ev to h and fails t if the answer is a failed invocation or a
// 5xx (API Gateway answers both with a 5xx), or a 4xx that is not the error
// body, or one that calls a field invalid without naming it. It returns the
// answer.
func check(t testing.TB, h function.HTTPHandler, ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	t.Helper()
	res, err := h(context.Background(), ev)
	if err == nil {
		apitest.CheckEvent(t, ev, res, false)
	}
	where := fmt.Sprintf("%s %s?%.200q body %.300q", ev.RequestContext.HTTP.Method, ev.RawPath, ev.RawQueryString, ev.Body)
	switch {
	case err != nil:
		t.Fatalf("%s: invocation failed: %v", where, err)
	case res.StatusCode >= 500:
		t.Fatalf("%s: %d %s", where, res.StatusCode, res.Body)
	case res.StatusCode < 400:
		return res
	}
	var b httpapi.ErrorBody
	if err := json.Unmarshal([]byte(res.Body), &b); err != nil || b.StatusCode != res.StatusCode || b.Code == "" || b.Success {
		t.Fatalf("%s: %d with body %s", where, res.StatusCode, res.Body)
	}
	if b.Code == "INVALID_FIELD" && (b.Field == "" || !strings.HasPrefix(b.Message, b.Field+": ")) {
		t.Fatalf("%s: 400 without its field: %s", where, res.Body)
	}
	return res
}

// TestBadInputIs4xx holds the inputs that made a 5xx, a panic or a wrong
// value, and other bad numbers: each answer is a 4xx naming its field.
func TestBadInputIs4xx(t *testing.T) {
	e := newInputEnv(t)
	long := strings.Repeat("x", 3000)
	company := "/admin/companies/" + e.companyID
	quote := func(amount string) string {
		return `{"operator":"mtn","country":"CM","currency":"XAF","amount":` + amount + `}`
	}
	rule := func(kv string) string { return `{"rules":[{"type":"PAYOUT","currency":"XAF",` + kv + `}]}` }
	var usd struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	e.mustDecode(t, e.mustCall(t, e.wallets, "POST", "/wallets", `{"currency":"USD","country":"United States","country_iso_code":"US","country_phone_code":"+1"}`, 201), &usd)
	credit := "/admin/wallets/" + usd.Data.ID + "/credit"
	tests := []struct {
		name                 string
		method, target, body string
		status               int
		field                string
	}{
		// A client_id past DynamoDB's 2048-byte key limit was a 500.
		{"long client_id", "POST", "/auth/token", `{"client_id":"` + long + `","client_key":"sk_x"}`, 401, ""},
		{"client_id near the key limit", "POST", "/auth/token", `{"client_id":"` + long[:2040] + `","client_key":"sk_x"}`, 401, ""},
		{"empty client_id", "POST", "/auth/token", `{"client_id":"","client_key":"sk_x"}`, 400, "client_id"},

		// Strings where numbers go were read as numbers.
		{"quote amount a string", "POST", "/wallets/calculate-transfer-fees", quote(`"20"`), 400, "amount"},
		{"quote amount 1e999999", "POST", "/wallets/calculate-transfer-fees", quote("1e999999"), 400, "amount"},
		{"quote amount 1e-999999", "POST", "/wallets/calculate-transfer-fees", quote("1e-999999"), 400, "amount"},
		{"payout amount 1e308", "POST", "/payment/payout",
			`{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":1e308,"currency":"XAF"}`, 400, "amount"},
		{"credit below 1", "POST", credit, `{"balance":"payin","amount":0.5,"reference":"r"}`, 400, "amount"},
		{"credit amount a string", "POST", credit, `{"balance":"payin","amount":"20","reference":"r"}`, 400, "amount"},

		// Fee percents were stored as 0 % or 100 %, strings accepted.
		{"percent 1e308", "PUT", company + "/fees", rule(`"percent":1e308`), 400, "rules[0].percent"},
		{"percent 2^64", "PUT", company + "/fees", rule(`"percent":18446744073709551616`), 400, "rules[0].percent"},
		{"percent past int64 in basis points", "PUT", company + "/fees", rule(`"percent":184467440737095616.16`), 400, "rules[0].percent"},
		{"percent a string", "PUT", company + "/fees", rule(`"percent":"20"`), 400, "rules[0].percent"},
		{"fixed a string", "PUT", company + "/fees", rule(`"fixed":"20"`), 400, "rules[0].fixed"},
		{"fixed 1e308", "PUT", company + "/fees", rule(`"fixed":1e308`), 400, "rules[0].fixed"},
		{"fixed negative", "PUT", company + "/fees", rule(`"fixed":-1`), 400, "rules[0].fixed"},

		// card_slots has a maximum.
		{"card_slots past the maximum", "PATCH", company, `{"card_slots":1000001}`, 400, "card_slots"},
		{"card_slots 1e308", "PATCH", company, `{"card_slots":1e308}`, 400, "card_slots"},
		{"card_slots a string", "PATCH", company, `{"card_slots":"5"}`, 400, "card_slots"},

		// A huge page overflowed the offset: a panic.
		{"page past the maximum, wallet transactions", "GET", "/wallet/transactions?page=9223372036854775807", "", 400, "page"},
		{"page past the maximum, one wallet", "GET", "/wallet/transactions/wallet/" + e.walletID + "?page=9223372036854775807", "", 400, "page"},
		{"page past the maximum, payments", "GET", "/payment/transactions?page=9223372036854775807", "", 400, "page"},
		{"page past the maximum, events", "GET", "/webhooks/events?page=9223372036854775807", "", 400, "page"},
		{"page past the maximum, customers", "GET", "/customers?page=9223372036854775807", "", 400, "page"},
		{"page 100001", "GET", "/payment/transactions?page=100001", "", 400, "page"},

		// A URL that does not parse failed the invocation.
		{"control character in the query", "GET", "/payment/transactions?status=\x00", "", 400, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := check(t, e.to(t, tt.method, tt.target), e.event(tt.method, tt.target, tt.body))
			b := apptest.DecodeErrorBody(t, res.Body)
			if res.StatusCode != tt.status || b.Field != tt.field {
				t.Fatalf("%d %s, want %d naming %q", res.StatusCode, res.Body, tt.status, tt.field)
			}
		})
	}
	t.Run("the fee schedule is unchanged", func(t *testing.T) {
		res := check(t, e.to(t, "GET", company+"/fees"), e.event("GET", company+"/fees", ""))
		if !strings.Contains(res.Body, `"default":true`) {
			t.Fatalf("schedule %s", res.Body)
		}
	})
}

// keyVariants returns body with key given twice in its object (a 0 before
// the value of its first occurrence) and with key in upper case.
func keyVariants(body, key string) (twice, upper string) {
	k := `"` + key + `":`
	if !strings.Contains(body, k) {
		panic("no key " + key + " in " + body)
	}
	return strings.Replace(body, k, k+"0,"+k, 1), strings.Replace(body, k, `"`+strings.ToUpper(key)+`":`, 1)
}

// TestBodyKeysAreExact: in the body of every route of the document that
// reads JSON fields (but the providers' signed notifications), a key
// given twice is a 400 naming it, and so is a key in another case than its
// field's (encoding/json alone matches keys whatever their case, and keeps
// the last of a key given twice).
func TestBodyKeysAreExact(t *testing.T) {
	e := newInputEnv(t)
	company := "/admin/companies/" + e.companyID
	id := "0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d"
	tests := []struct {
		method, target, body string
		key, at              string // the key changed; at is the path of its object
	}{
		{"POST", "/auth/token", `{"client_id":"c","client_key":"sk_x"}`, "client_key", ""},
		{"POST", "/admin/companies", `{"name":"Keys Ltd"}`, "name", ""},
		{"POST", "/admin/companies", `{"name":"Keys Ltd","owner":{"email":"keys@owner.example"}}`, "email", "owner."},
		{"POST", company + "/owner", `{"email":"keys@owner.example","temporary_password":"Keys-Password-1"}`, "temporary_password", ""},
		{"PATCH", company, `{"is_active":true}`, "is_active", ""},
		{"PUT", company + "/fees", `{"rules":[{"type":"PAYOUT","currency":"XAF","percent":1}]}`, "percent", "rules[0]."},
		{"PUT", company + "/exchange-rates", `{"rates":[{"from_currency":"XAF","to_currency":"USD","rate":0.0016}]}`, "rate", "rates[0]."},
		{"POST", "/admin/wallets/" + e.walletID + "/credit", `{"balance":"payin","amount":1000,"reference":"keys-1"}`, "amount", ""},
		{"POST", "/admin/payments/" + e.paymentID + "/resolve", `{"status":"FAILED","note":"n"}`, "status", ""},
		{"POST", "/admin/customers/" + id + "/kyc", `{"status":"REJECTED","reason":"r"}`, "reason", ""},
		{"POST", "/wallets", `{"currency":"XOF","country":"Senegal","country_iso_code":"SN","country_phone_code":"+221"}`, "currency", ""},
		{"POST", "/wallets/calculate-transfer-fees", `{"operator":"mtn","country":"CM","currency":"XAF","amount":1000}`, "amount", ""},
		{"POST", "/wallets/" + e.walletID + "/transfer-internal", `{"amount":10,"from":"payout","to":"payin"}`, "amount", ""},
		{"POST", "/wallets/fund", `{"wallet_id":"` + e.walletID + `","amount":100,"balance":"payin","reference":"wire-1"}`, "amount", ""},
		{"POST", "/company/exchange-rates/convert", `{"fromCurrency":"XAF","toCurrency":"USD","amount":5000}`, "fromCurrency", ""},
		{"POST", "/partner/wallets/xaf-usd-conversion", `{"source_wallet_id":"` + e.walletID + `","amount":1000}`, "amount", ""},
		{"POST", "/partner/wallets/preview-conversion", `{"source_wallet_id":"` + e.walletID + `","amount":1000}`, "amount", ""},
		{"POST", "/wallets/deposit", `{"sourceWallet":{"id":"` + e.walletID + `","amount":1000},"exchangeRate":{"exchangeRateId":"r"}}`, "amount", "sourceWallet."},
		{"POST", "/wallets/deposit", `{"sourceWallet":{"id":"` + e.walletID + `","amount":1000},"exchangeRate":{"exchangeRateId":"r"}}`, "exchangeRateId", "exchangeRate."},
		{"POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":1000,"currency":"XAF"}`, "amount", ""},
		{"POST", "/payment/collect", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":1000,"currency":"XAF"}`, "amount", ""},
		{"POST", "/customers/enroll", `{"first_name":"Amina","email":"a@example.com"}`, "email", ""},
		{"POST", "/cards", `{"customer_id":"` + id + `","brand":"visa","amount":25}`, "amount", ""},
		{"POST", "/cards/" + id + "/fund", `{"amount":10}`, "amount", ""},
		{"POST", "/cards/" + id + "/withdraw", `{"amount":10}`, "amount", ""},
		{"POST", "/cards/" + id + "/terminate", `{"reason":"lost"}`, "reason", ""},
		{"POST", "/sandbox/cards/" + id + "/authorizations", `{"amount":12.5,"merchant_name":"Shop","merchant_city":"Lyon"}`, "amount", ""},
		{"POST", "/sandbox/cards/" + id + "/terminate", `{"reason":"risk"}`, "reason", ""},
		{"POST", "/sandbox/card-transactions/" + id + "/settle", `{"amount":10}`, "amount", ""},
		{"POST", "/sandbox/card-transactions/" + id + "/reverse", `{"amount":10}`, "amount", ""},
		{"POST", "/sandbox/card-transactions/" + id + "/refund", `{"amount":10}`, "amount", ""},
		{"POST", "/sandbox/cards/" + id + "/captures", `{"amount":1,"merchant_name":"A","merchant_city":"B"}`, "amount", ""},
		{"POST", "/sandbox/cards/" + id + "/refunds", `{"amount":1}`, "amount", ""},
		{"POST", "/cards/" + id + "/reveal-sessions", `{"nonce":"n"}`, "nonce", ""},
		{"POST", "/cards/transactions/" + id + "/disputes", `{"reason":"not_received","explanation":"e"}`, "reason", ""},
		{"POST", "/payment/payouts/bulk", `{"description":"d","items":[{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":100,"currency":"XAF"}]}`, "description", ""},
		{"POST", "/admin/reconciliations", `{"provider":"operator"}`, "provider", ""},
		{"POST", "/webhooks/endpoints", `{"url":"https://hooks.example.com/in","enabled_events":["*"]}`, "url", ""},
		{"PATCH", "/webhooks/endpoints/" + id, `{"status":"disabled"}`, "status", ""},
		{"POST", "/webhooks/endpoints/" + id + "/rotate-secret", `{"expire_previous_in_hours":1}`, "expire_previous_in_hours", ""},
		{"POST", "/webhooks/events/" + id + "/resend", `{"endpoint_id":"e"}`, "endpoint_id", ""},
	}
	// Every body a client writes has its case above; the providers'
	// notifications, read once their signature holds, are not among them.
	c := apitest.Default(t)
	covered := map[string]bool{}
	for _, tt := range tests {
		op, _ := c.Find(tt.method, tt.target)
		covered[op.String()] = true
	}
	for _, op := range c.Operations() {
		if len(op.BodyFields()) > 0 && !op.Signed() && !covered[op.String()] {
			t.Errorf("%s reads a JSON body of fields %v: no case here", op, op.BodyFields())
		}
	}
	for _, tt := range tests {
		twice, upper := keyVariants(tt.body, tt.key)
		for _, c := range []struct {
			body, field, problem string
		}{
			{twice, tt.at + tt.key, "is given more than once"},
			{upper, tt.at + strings.ToUpper(tt.key), "unknown field (names are case-sensitive: " + tt.key + ")"},
		} {
			t.Run(tt.method+" "+tt.target+" "+c.body, func(t *testing.T) {
				res := check(t, e.to(t, tt.method, tt.target), e.event(tt.method, tt.target, c.body))
				b := apptest.DecodeErrorBody(t, res.Body)
				if res.StatusCode != http.StatusBadRequest || b.Code != "INVALID_FIELD" || b.Field != c.field || b.Message != c.field+": "+c.problem {
					t.Fatalf("%d %s, want 400 %q", res.StatusCode, res.Body, c.field+": "+c.problem)
				}
			})
		}
	}
	t.Run("a quote with every key in another case", func(t *testing.T) {
		res := check(t, e.to(t, "POST", "/company/exchange-rates/convert"), e.event("POST", "/company/exchange-rates/convert", `{"FROMCURRENCY":"XAF","ToCurrency":"USD","AMOUNT":5000}`))
		if b := apptest.DecodeErrorBody(t, res.Body); res.StatusCode != http.StatusBadRequest || b.Field != "FROMCURRENCY" {
			t.Fatalf("%d %s, want 400 naming FROMCURRENCY", res.StatusCode, res.Body)
		}
	})
}

// TestEmptyBooleansAre400: every boolean query parameter of the document is
// true or false; given empty (?sync= or ?sync) it is a 400 naming it, where
// an empty value once read as the default (?reconciliation_required=
// listed every payment).
func TestEmptyBooleansAre400(t *testing.T) {
	e := newInputEnv(t)
	var tests []struct{ method, target, param string }
	for _, op := range apitest.Default(t).Operations() {
		for _, p := range op.Parameters() {
			if p.In == "query" && p.Schema != nil && p.Schema.Value != nil && p.Schema.Value.Type.Is("boolean") {
				tests = append(tests, struct{ method, target, param string }{op.Method, e.fill(op.Path), p.Name})
			}
		}
	}
	if len(tests) < 19 {
		t.Fatalf("%d boolean query parameters in the document, want 19 or more", len(tests))
	}
	for _, tt := range tests {
		for _, query := range []string{tt.param + "=", tt.param} {
			t.Run(tt.method+" "+tt.target+"?"+query, func(t *testing.T) {
				res := check(t, e.to(t, tt.method, tt.target), e.event(tt.method, tt.target+"?"+query, ""))
				b := apptest.DecodeErrorBody(t, res.Body)
				if res.StatusCode != http.StatusBadRequest || b.Field != tt.param || !strings.HasPrefix(b.Message, tt.param+": must be true") {
					t.Fatalf("%d %s, want a 400 naming %s", res.StatusCode, res.Body, tt.param)
				}
			})
		}
	}
}

// TestRepeatedCredentialHeaders: two Authorization or two X-Admin-Key
// headers are 401, however they reach the function. API Gateway joins
// repeated headers with a comma ("a,b"); an event may also carry the same
// header under two spellings.
func TestRepeatedCredentialHeaders(t *testing.T) {
	e := newInputEnv(t)
	bearer := "Bearer " + e.token
	tests := []struct {
		name    string
		target  string
		headers map[string]string
		want    int
	}{
		{"one token", "/wallets", map[string]string{"authorization": bearer}, 200},
		{"token twice, joined", "/wallets", map[string]string{"authorization": bearer + "," + bearer}, 401},
		{"token twice, two spellings", "/wallets", map[string]string{"authorization": bearer, "Authorization": bearer}, 401},
		{"token and garbage", "/wallets", map[string]string{"authorization": bearer + ", Bearer x"}, 401},
		{"one admin key", "/admin/companies/" + e.companyID, map[string]string{"x-admin-key": apptest.AuthTestAdminKey}, 200},
		{"admin key twice, joined", "/admin/companies/" + e.companyID, map[string]string{"x-admin-key": apptest.AuthTestAdminKey + "," + apptest.AuthTestAdminKey}, 401},
		{"admin key then a wrong one", "/admin/companies/" + e.companyID, map[string]string{"x-admin-key": apptest.AuthTestAdminKey + ", wrong"}, 401},
		{"admin key twice, two spellings", "/admin/companies/" + e.companyID, map[string]string{"x-admin-key": apptest.AuthTestAdminKey, "X-Admin-Key": apptest.AuthTestAdminKey}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := e.event("GET", tt.target, "")
			delete(ev.Headers, "authorization")
			delete(ev.Headers, "x-admin-key")
			for k, v := range tt.headers {
				ev.Headers[k] = v
			}
			res := check(t, e.to(t, "GET", tt.target), ev)
			if res.StatusCode != tt.want {
				t.Fatalf("%d %s, want %d", res.StatusCode, res.Body, tt.want)
			}
			if tt.want == http.StatusUnauthorized && apptest.DecodeErrorBody(t, res.Body).Code != "UNAUTHORIZED" {
				t.Fatalf("body %s", res.Body)
			}
		})
	}
}

// TestLongPathIDsAre404: every id in a path becomes part of a DynamoDB key;
// one past the key limit is not found, never sent to DynamoDB. The routes
// are the document's operations with an id in their path and a 404; each
// is sent the body longPathBodies gives it, else none.
func TestLongPathIDsAre404(t *testing.T) {
	e := newInputEnv(t)
	long := strings.Repeat("7", 3000)
	n := 0
	for _, op := range apitest.Default(t).Operations() {
		if len(op.Params("path")) == 0 || op.Op.Responses.Status(http.StatusNotFound) == nil {
			continue
		}
		target := op.Path
		for strings.Contains(target, "{") {
			i, j := strings.Index(target, "{"), strings.Index(target, "}")
			target = target[:i] + long + target[j+1:]
		}
		n++
		t.Run(op.String(), func(t *testing.T) {
			res := check(t, e.to(t, op.Method, target), e.event(op.Method, target, longPathBodies[op.String()]))
			if res.StatusCode != http.StatusNotFound {
				t.Fatalf("%d %s, want 404", res.StatusCode, res.Body)
			}
		})
	}
	if n < 29 {
		t.Fatalf("%d routes with an id in their path, want 29 or more", n)
	}
}

// longPathBodies gives the bodies TestLongPathIDsAre404 sends, by route,
// where an empty body would be refused before the id is read.
var longPathBodies = map[string]string{
	"POST /sandbox/cards/{id}/authorizations":                `{"amount":1,"merchant_name":"A","merchant_city":"B"}`,
	"POST /sandbox/card-transactions/{transactionId}/refund": `{"amount":1}`,
	"PATCH /admin/companies/{id}":                            `{"is_active":true}`,
	"PUT /admin/companies/{id}/fees":                         `{"rules":[]}`,
	"PUT /admin/companies/{id}/exchange-rates":               `{"rates":[]}`,
	"POST /admin/companies/{id}/owner":                       `{"email":"owner@long.example"}`,
	"POST /admin/wallets/{walletId}/credit":                  `{"balance":"payin","amount":1,"reference":"r"}`,
	"POST /wallets/{id}/transfer-internal":                   `{"amount":1}`,
	"POST /admin/customers/{id}/kyc":                         `{"status":"VERIFIED"}`,
	"POST /admin/payments/{transactionId}/resolve":           `{"status":"FAILED","note":"n"}`,
	"PATCH /webhooks/endpoints/{id}":                         `{"status":"disabled"}`,
	"POST /cards/transactions/{id}/disputes":                 `{"reason":"not_received","explanation":"e"}`,
	"POST /cards/{id}/fund":                                  `{"amount":1}`,
	"POST /cards/{id}/withdraw":                              `{"amount":1}`,
	"POST /cards/{id}/reveal-sessions":                       `{"nonce":"n"}`,
	"POST /sandbox/cards/{id}/captures":                      `{"amount":1,"merchant_name":"A","merchant_city":"B"}`,
	"POST /sandbox/cards/{id}/refunds":                       `{"amount":1}`,
}

// listTargets are the routes whose query strings the fuzz target and the
// seeds exercise: every GET of the document with query parameters (every
// list, the status route's flags, the cards' sync), with the set-up's ids.
func (e *inputEnv) listTargets(tb testing.TB) []struct {
	h    function.HTTPHandler
	path string
} {
	tb.Helper()
	var out []struct {
		h    function.HTTPHandler
		path string
	}
	for _, op := range apitest.Default(tb).Operations() {
		if op.Method == http.MethodGet && len(op.Params("query")) > 0 {
			path := e.fill(op.Path)
			out = append(out, struct {
				h    function.HTTPHandler
				path string
			}{e.to(tb, op.Method, path), path})
		}
	}
	return out
}

// endpoint creates a webhook endpoint of the company during set-up and
// returns its id.
func (e *inputEnv) endpoint(tb testing.TB) string {
	tb.Helper()
	var created struct {
		Data struct{ ID string } `json:"data"`
	}
	e.mustDecode(tb, e.mustCall(tb, e.webhooks, "POST", "/webhooks/endpoints", `{"url":"https://hooks.example.com/in","enabled_events":["*"]}`, 201), &created)
	return created.Data.ID
}
