package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"payments/infra/local/samtemplate"
	"payments/pkg/apidoc/apitest"
	"payments/pkg/app"
	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency"
	"payments/pkg/store"
)

// payoutBody is a payout of amount XAF to a number the sandbox settles.
func payoutBody(amount int) string {
	return fmt.Sprintf(`{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":%d,"currency":"XAF"}`, amount)
}

// checkReplay fails t unless r is first sent again: the same status, body
// bytes and Content-Type, marked Idempotent-Replayed.
func checkReplay(t *testing.T, first, r apptest.Result) {
	t.Helper()
	if r.Status != first.Status || r.Raw != first.Raw || r.Headers["Content-Type"] != first.Headers["Content-Type"] ||
		r.Headers[idempotency.ReplayedHeader] != "true" {
		t.Fatalf("not a replay of %d %s: %d %v %s", first.Status, first.Raw, r.Status, r.Headers, r.Raw)
	}
}

// checkCode fails t unless r is the error status with code.
func checkCode(t *testing.T, r apptest.Result, status int, code string) {
	t.Helper()
	if r.Status != status || r.Str("code") != code || r.Headers[idempotency.ReplayedHeader] != "" {
		t.Fatalf("want %d %s: %d %v %s", status, code, r.Status, r.Headers, r.Raw)
	}
}

// TestIdempotencyKeyHeader sends each bad Idempotency-Key to each of the
// routes that take one, the routes docs/openapi.yaml gives the header, at
// the function template.yaml wires it to: a 400 naming the header, before
// anything is done, drawn on the company's money bucket. Every other route
// ignores the header, and draws on no money bucket.
func TestIdempotencyKeyHeader(t *testing.T) {
	env := apptest.NewAuthTestEnv(t)
	_, clientID, key := env.CreateCompany(t, "Keys "+uuid.NewString()[:6])
	auth := "Bearer " + env.MustToken(t, clientID, key)
	// The money bucket's burst is its own, so that an answer's
	// RateLimit-Limit tells the class of its route.
	cfg := env.Cfg
	cfg.CompanyLimits.Money.Burst = max(cfg.CompanyLimits.Read.Burst, cfg.CompanyLimits.Reveal.Burst) + 1
	moneyBurst := strconv.Itoa(cfg.CompanyLimits.Money.Burst)
	dirs := routeFunctions(t)
	handlers := map[string]function.HTTPHandler{}
	serving := func(route string) function.HTTPHandler {
		dir, ok := dirs[route]
		if !ok {
			t.Fatalf("no function of template.yaml serves %s", route)
		}
		if handlers[dir] == nil {
			var err error
			if handlers[dir], err = app.HTTPFunctions[dir].New(context.Background(), apptest.Recording(cfg, dir), env.Caches); err != nil {
				t.Fatal(err)
			}
		}
		return handlers[dir]
	}
	// target is path with a new id in each of its parameters.
	target := func(path string) string {
		return pathParam.ReplaceAllStringFunc(path, func(string) string { return uuid.NewString() })
	}
	bad := []struct{ name, value string }{
		{"empty", ""},
		{"256 characters", strings.Repeat("k", 256)},
		{"not ASCII", "clé-1"},
		{"a tab", "a\tb"},
		{"DEL", "a\x7fb"},
		{"a comma: two values", "a,b"},
	}
	money := apitest.Default(t).IdempotentRoutes()
	if len(money) == 0 {
		t.Fatal("docs/openapi.yaml gives no route an Idempotency-Key")
	}
	for _, pattern := range money {
		method, path, _ := strings.Cut(pattern, " ")
		h := serving(pattern)
		for _, tt := range bad {
			t.Run(pattern+"/"+tt.name, func(t *testing.T) {
				res := apptest.AuthTestCall(t, h, apptest.AuthTestEvent(method, httpapi.BasePath+target(path), "10.9.9.9",
					map[string]string{"authorization": auth, idempotency.Header: tt.value}, "{}"))
				body := apptest.DecodeErrorBody(t, res.Body)
				if res.StatusCode != 400 || body.Code != "INVALID_FIELD" || body.Field != idempotency.Header ||
					body.Message != "Idempotency-Key: must be 1 to 255 printable ASCII characters" {
					t.Fatalf("%d %s", res.StatusCode, res.Body)
				}
				if got := apitest.Header(res.Headers).Get("RateLimit-Limit"); got != moneyBurst {
					t.Fatalf("RateLimit-Limit %q, want the money bucket's %s", got, moneyBurst)
				}
			})
		}
	}
	// A route that moves no money ignores the header.
	for route := range dirs {
		if slices.Contains(money, route) || dirs[route] == "dashboard" { // the dashboard's pages are outside the API
			continue
		}
		method, path, _ := strings.Cut(route, " ")
		h := serving(route)
		t.Run(route, func(t *testing.T) {
			ev := apptest.AuthTestEvent(method, httpapi.BasePath+target(path), "10.9.9.9",
				map[string]string{"authorization": auth, idempotency.Header: ""}, "{}")
			res, err := h(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			apitest.CheckEvent(t, ev, res, false)
			var body httpapi.ErrorBody
			_ = json.Unmarshal([]byte(res.Body), &body) // an answer that is no error has no field
			if body.Field == idempotency.Header {
				t.Fatalf("%s read the header: %d %s", route, res.StatusCode, res.Body)
			}
			if got := apitest.Header(res.Headers).Get("RateLimit-Limit"); got == moneyBurst {
				t.Fatalf("%s drew on the money bucket", route)
			}
		})
	}
}

// pathParam is a parameter of a route's path ("{id}").
var pathParam = regexp.MustCompile(`\{[^}]+\}`)

// TestIdempotencyReplay: the same key and request answer the first
// response again and move no money; another body, route or wallet with the
// key is a 422; another company's same key is its own; a 4xx is stored
// too.
func TestIdempotencyReplay(t *testing.T) {
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, walletID := e.Company("10000")
	otherID, other, _ := e.Company("10000")
	key := "order-" + uuid.NewString()
	first := e.Call(e.Payments, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, key)
	if first.Status != 200 || first.Str("data", "status") != "PENDING" || first.Headers[idempotency.ReplayedHeader] != "" {
		t.Fatalf("payout: %d %v %s", first.Status, first.Headers, first.Raw)
	}
	checkReplay(t, first, e.Call(e.Payments, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, key))
	if w := e.Wallet(token, walletID); w["payout_available"] != json.Number("8985") || e.PayoutCount(token) != "1" {
		t.Fatalf("money moved again: %v, %s payments", w, e.PayoutCount(token))
	}
	reused := []struct{ name, path, body string }{
		{"another amount", "/payment/payout", payoutBody(1001)},
		{"the same JSON, other bytes", "/payment/payout", " " + payoutBody(1000)},
		{"another route", "/payment/collect", payoutBody(1000)},
	}
	for _, tt := range reused {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Call(e.Payments, token, "POST", tt.path, tt.body, idempotency.Header, key)
			checkCode(t, r, 422, "IDEMPOTENCY_KEY_REUSED")
			if r.Str("message") != "this Idempotency-Key was used with a different request" {
				t.Fatalf("message %s", r.Raw)
			}
		})
	}
	theirs := e.Call(e.Payments, other, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, key)
	if theirs.Status != 200 || theirs.Headers[idempotency.ReplayedHeader] != "" || theirs.Str("data", "transaction_id") == first.Str("data", "transaction_id") {
		t.Fatalf("the other company's payout: %d %v %s", theirs.Status, theirs.Headers, theirs.Raw)
	}

	// A refusal is stored: the same request answers it again even once it
	// would pass.
	refused := e.Call(e.Payments, token, "POST", "/payment/payout", payoutBody(9000), idempotency.Header, "big-one")
	checkCode(t, refused, 400, "INSUFFICIENT_BALANCE")
	e.Admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":5000,"reference":"top-up"}`)
	checkReplay(t, refused, e.Call(e.Payments, token, "POST", "/payment/payout", payoutBody(9000), idempotency.Header, "big-one"))

	// The wallets function: a transfer replayed, the key on another wallet's
	// path is another request.
	e.Admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payin","amount":3000,"reference":"payin"}`)
	target := "/wallets/" + walletID + "/transfer-internal"
	moved := e.Call(e.Wallets, token, "POST", target, `{"amount":2000}`, idempotency.Header, "transfer-1")
	if moved.Status != 200 {
		t.Fatalf("transfer: %s", moved.Raw)
	}
	checkReplay(t, moved, e.Call(e.Wallets, token, "POST", target, `{"amount":2000}`, idempotency.Header, "transfer-1"))
	if w := e.Wallet(token, walletID); w["payin_balance"] != json.Number("1000") {
		t.Fatalf("transferred twice: %v", w)
	}
	checkCode(t, e.Call(e.Wallets, token, "POST", "/wallets/"+uuid.NewString()+"/transfer-internal", `{"amount":2000}`, idempotency.Header, "transfer-1"),
		422, "IDEMPOTENCY_KEY_REUSED")
	e.Verify(companyID)
	e.Verify(otherID)
}

// TestIdempotencyInProgress: a key whose request still runs is a 409 with
// Retry-After; once its lease has ended (the function died), a retry takes
// the key over and runs the request, once.
func TestIdempotencyInProgress(t *testing.T) {
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, walletID := e.Company("10000")
	keys := store.NewIdempotency(e.DB)
	hash := idempotency.RequestHash("POST", httpapi.BasePath+"/payment/payout", []byte(payoutBody(1000)))
	claim := func(key string, at time.Time) {
		t.Helper()
		c := idempotency.Claim{RequestHash: hash, LeaseID: uuid.NewString(), Now: at, LeaseUntil: at.Add(idempotency.Lease), ExpiresAt: at.Add(idempotency.Retention)}
		if _, ok, err := keys.Claim(context.Background(), companyID, key, c); err != nil || !ok {
			t.Fatalf("claim %s: %v %v", key, ok, err)
		}
	}

	claim("running", time.Now())
	busy := e.Call(e.Payments, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, "running")
	checkCode(t, busy, 409, "IDEMPOTENCY_KEY_IN_USE")
	if busy.Headers["Retry-After"] != "1" {
		t.Fatalf("Retry-After %q", busy.Headers["Retry-After"])
	}
	checkCode(t, e.Call(e.Payments, token, "POST", "/payment/payout", payoutBody(5), idempotency.Header, "running"), 422, "IDEMPOTENCY_KEY_REUSED")

	claim("died", time.Now().Add(-idempotency.Lease-time.Second))
	checkCode(t, e.Call(e.Payments, token, "POST", "/payment/payout", payoutBody(5), idempotency.Header, "died"), 422, "IDEMPOTENCY_KEY_REUSED")
	took := e.Call(e.Payments, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, "died")
	if took.Status != 200 || took.Headers[idempotency.ReplayedHeader] != "" {
		t.Fatalf("takeover: %d %v %s", took.Status, took.Headers, took.Raw)
	}
	checkReplay(t, took, e.Call(e.Payments, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, "died"))
	if w := e.Wallet(token, walletID); w["payout_available"] != json.Number("8985") || e.PayoutCount(token) != "1" {
		t.Fatalf("wallet %v, %s payments", w, e.PayoutCount(token))
	}
	e.Verify(companyID)
}

// conflicting returns cfg whose every TransactWriteItems is cancelled for a
// conflict with another transaction (DynamoDB Local never raises one).
func conflicting(cfg function.Config) function.Config {
	cfg.AWS = cfg.AWS.Copy()
	cfg.AWS.APIOptions = append(cfg.AWS.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("conflict", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput)
			if !ok {
				return next.HandleInitialize(ctx, in)
			}
			reasons := make([]types.CancellationReason, len(tx.TransactItems))
			for i := range reasons {
				reasons[i].Code = aws.String("TransactionConflict")
			}
			return middleware.InitializeOutput{}, middleware.Metadata{}, &types.TransactionCanceledException{
				Message: aws.String("Transaction cancelled (injected)"), CancellationReasons: reasons,
			}
		}), middleware.After)
	})
	return cfg
}

// TestIdempotencyReleasesRetryAfter: a payout that keeps losing its race
// answers 409 CONFLICT with Retry-After, having done nothing; its key is
// released, so the retry with it runs.
func TestIdempotencyReleasesRetryAfter(t *testing.T) {
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, walletID := e.Company("10000")
	busy, err := paymentsapi.New(context.Background(), apptest.Recording(conflicting(e.Cfg), "payments"))
	if err != nil {
		t.Fatal(err)
	}
	lost := e.Call(busy, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, "retry-me")
	checkCode(t, lost, 409, "CONFLICT")
	if lost.Headers["Retry-After"] != "1" || e.PayoutCount(token) != "0" {
		t.Fatalf("Retry-After %q, %s payments", lost.Headers["Retry-After"], e.PayoutCount(token))
	}
	ran := e.Call(e.Payments, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, "retry-me")
	if ran.Status != 200 || ran.Headers[idempotency.ReplayedHeader] != "" {
		t.Fatalf("retry: %d %v %s", ran.Status, ran.Headers, ran.Raw)
	}
	checkReplay(t, ran, e.Call(busy, token, "POST", "/payment/payout", payoutBody(1000), idempotency.Header, "retry-me"))
	if w := e.Wallet(token, walletID); w["payout_available"] != json.Number("8985") || e.PayoutCount(token) != "1" {
		t.Fatalf("wallet %v, %s payments", w, e.PayoutCount(token))
	}
	e.Verify(companyID)
}

// TestIdempotencyLeaseOutlivesFunctions holds idempotency.Lease to
// template.yaml: longer, with a margin, than every function serving an
// idempotent route may run.
func TestIdempotencyLeaseOutlivesFunctions(t *testing.T) {
	tpl, err := samtemplate.Load("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	global := fmt.Sprint(tpl.Globals["Function"].(map[string]any)["Timeout"])
	money := apitest.Default(t).IdempotentRoutes()
	served := 0
	for _, fn := range tpl.Functions() {
		idempotent := false
		for _, r := range fn.Routes {
			idempotent = idempotent || slices.Contains(money, r.Method+" "+strings.TrimPrefix(r.Path, httpapi.BasePath))
		}
		if !idempotent {
			continue
		}
		served++
		timeout := global
		if v, ok := tpl.Resources[fn.LogicalID].Properties["Timeout"]; ok {
			timeout = fmt.Sprint(v)
		}
		seconds, err := strconv.Atoi(timeout)
		if err != nil || time.Duration(seconds)*time.Second+10*time.Second > idempotency.Lease {
			t.Errorf("%s: Timeout %s (%v) leaves less than 10 s to the %v lease", fn.LogicalID, timeout, err, idempotency.Lease)
		}
	}
	if served != 4 {
		t.Errorf("%d functions serve the idempotent routes, want 4 (payments, cards, wallets, card-network)", served)
	}
}
