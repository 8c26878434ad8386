package payments_test

import (
	"context"

	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/payoutworker"
	"payments/pkg/function/services"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/httpapi"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/providers"
	"payments/pkg/store"
	"payments/pkg/store/storetest"
)

// TestReconciliationEndToEnd is the "done", through the functions'
// handlers and the SQS emulator, with a 3-second deadline: a payout to a
// number ending in 998 is still PROCESSING with its funds reserved after
// the deadline, flagged for reconciliation on the transaction, in the
// company's filtered list and in the console's list; the console resolves
// it FAILED, which refunds it once, and a second resolution is refused.
func TestReconciliationEndToEnd(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	e.Cfg.PaymentDeadline = 3 * time.Second
	ctx := context.Background()
	var err error
	if e.Payments, err = paymentsapi.New(ctx, apptest.Recording(e.Cfg, "payments")); err != nil {
		t.Fatal(err)
	}
	if e.Worker, err = payoutworker.New(ctx, apptest.Recording(e.Cfg, "payout-worker")); err != nil {
		t.Fatal(err)
	}
	companyID, token, walletID := e.Company("10000")
	r := e.Call(e.Payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000998","amount":1000,"currency":"XAF"}`)
	if r.Status != 200 {
		t.Fatalf("payout: %s", r.Raw)
	}
	id := r.Str("data", "transaction_id")
	e.Pump(30*time.Second, func() bool { return e.Status(token, id).Str("data", "reconciliation_required") == "true" })
	if s := e.Status(token, id); s.Str("data", "status") != "PROCESSING" || s.Str("data", "error_message") != "<nil>" {
		t.Fatalf("after the deadline: %s", s.Raw)
	}
	if w := e.Wallet(token, walletID); w["payout_reserved"] != json.Number("1015") || w["payout_balance"] != json.Number("10000") {
		t.Fatalf("wallet after the deadline: %v", w)
	}
	if s := e.Call(e.Payments, token, "GET", "/payment/transactions/"+id+"/status?doubleCheck=true", ""); s.Status != 200 || s.Str("data", "status") != "PROCESSING" {
		t.Fatalf("doubleCheck: %s", s.Raw)
	}
	flagged := e.Call(e.Payments, token, "GET", "/payment/transactions?reconciliation_required=true", "")
	if len(flagged.Items()) != 1 || flagged.Items()[0].(map[string]any)["transaction_id"] != id {
		t.Fatalf("company's flagged list: %s", flagged.Raw)
	}
	var console apptest.Result
	deadline := time.Now().Add(10 * time.Second) // the console's list is a GSI, eventually consistent
	for {
		console = e.Admin("GET", "/admin/payments?reconciliation_required=true", "")
		if len(console.Items()) > 0 || time.Now().After(deadline) {
			break
		}
	}
	item, _ := console.Items()[0].(map[string]any)
	if console.Status != 200 || console.Str("pagination", "total") != "1" || item["transaction_id"] != id || item["company_id"] != companyID || item["order_id"] != "SBX-"+id {
		t.Fatalf("console list: %s", console.Raw)
	}
	if r := e.Admin("GET", "/admin/payments", ""); r.Status != 400 || r.Str("field") != "reconciliation_required" {
		t.Fatalf("console list without the filter: %s", r.Raw)
	}

	res := e.Admin("POST", "/admin/payments/"+id+"/resolve", `{"status":"FAILED","note":"operator confirms it never paid (ticket 4411)"}`)
	if res.Status != 200 || res.Str("data", "status") != "FAILED" || res.Str("data", "resolved_by") != "admin-api-key" ||
		res.Str("data", "resolution_note") != "operator confirms it never paid (ticket 4411)" {
		t.Fatalf("resolve: %s", res.Raw)
	}
	again := e.Admin("POST", "/admin/payments/"+id+"/resolve", `{"status":"SUCCESS","note":"second thoughts"}`)
	if again.Status != http.StatusConflict || again.Str("code") != "PAYMENT_FINAL" {
		t.Fatalf("second resolution: %s", again.Raw)
	}
	if w := e.Wallet(token, walletID); w["payout_reserved"] != json.Number("0") || w["payout_available"] != json.Number("10000") {
		t.Fatalf("wallet after the refund: %v", w)
	}
	if s := e.Status(token, id); s.Str("data", "status") != "FAILED" || s.Str("data", "reconciliation_required") != "false" {
		t.Fatalf("after the resolution: %s", s.Raw)
	}
	if n := e.Refunds(token, id); n != 1 {
		t.Fatalf("%d refunds", n)
	}
	e.Verify(companyID)
}

// TestConsoleCreditOutsideSandbox: in production mode the console's
// sandbox credit is refused unless the stack allows it.
func TestConsoleCreditOutsideSandbox(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	_, _, walletID := e.Company("")
	ctx := context.Background()
	for _, tt := range []struct {
		allow bool
		want  int
	}{{false, http.StatusForbidden}, {true, http.StatusOK}} {
		cfg := e.Cfg
		cfg.Mode, cfg.AdminCreditInProduction = function.ModeProduction, tt.allow
		cfg.IssuerAPIKey = apptest.StripeTestKey // the console's reconciliation reads the card issuer
		h, err := adminapi.New(ctx, apptest.Recording(cfg, "admin"))
		if err != nil {
			t.Fatal(err)
		}
		r := e.Call(h, "", "POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":10,"reference":"prod-1"}`,
			adminapi.KeyHeader, apptest.AuthTestAdminKey)
		if r.Status != tt.want || (tt.want == 403 && r.Str("code") != "CREDIT_DISABLED") {
			t.Fatalf("ADMIN_CREDIT_IN_PRODUCTION=%v: %s", tt.allow, r.Raw)
		}
	}
}

// TestConflictIsA409WithRetryAfter: a write that keeps losing its race
// with other writes is a 409 with a stable code and Retry-After, never a
// 500.
func TestConflictIsA409WithRetryAfter(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	_, token, _ := e.Company("1000")
	conflicting, _ := storetest.WithConflicts(store.New(e.DB.Client, e.DB.Table), 1<<30)
	p, err := services.Providers(e.Cfg, conflicting, providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := services.Operator(e.Cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := services.Payments(e.Cfg, conflicting, gw, apptest.TestQueue(e.Cfg, e.Cfg.PayoutsQueueURL),
		apptest.TestQueue(e.Cfg, e.Cfg.BulkPayoutsQueueURL), services.Events(conflicting, apptest.TestQueue(e.Cfg, e.Cfg.WebhooksQueueURL)),
		e.Caches.Fees, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	guard, err := tokenkeys.Guard(context.Background(), e.Cfg, e.DB, e.Caches.Companies)
	if err != nil {
		t.Fatal(err)
	}
	rt := httpapi.NewRouter(adminapi.Errors, guard)
	paymentshttp.Routes(rt, svc)
	h := httpadapter.NewV2(rt).ProxyWithContext
	r := e.Call(h, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":10,"currency":"XAF"}`)
	if r.Status != http.StatusConflict || r.Str("code") != "CONFLICT" || r.Headers["Retry-After"] != "1" {
		t.Fatalf("payout under endless conflicts: %d %s %v", r.Status, r.Raw, r.Headers)
	}
}
