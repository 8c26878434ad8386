package app

import (
	"context"

	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/payoutworker"
	"payments/pkg/function/services"
	"payments/pkg/httpapi"
	"payments/pkg/payments"
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
	e := newPaymentsTestEnv(t)
	e.cfg.PaymentDeadline = 3 * time.Second
	ctx := context.Background()
	var err error
	if e.payments, err = paymentsapi.New(ctx, recording(e.cfg, "payments")); err != nil {
		t.Fatal(err)
	}
	if e.worker, err = payoutworker.New(ctx, recording(e.cfg, "payout-worker")); err != nil {
		t.Fatal(err)
	}
	companyID, token, walletID := e.company("10000")
	r := e.call(e.payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000998","amount":1000,"currency":"XAF"}`)
	if r.status != 200 {
		t.Fatalf("payout: %s", r.raw)
	}
	id := r.str("data", "transaction_id")
	e.pump(30*time.Second, func() bool { return e.status(token, id).str("data", "reconciliation_required") == "true" })
	if s := e.status(token, id); s.str("data", "status") != "PROCESSING" || s.str("data", "error_message") != "<nil>" {
		t.Fatalf("after the deadline: %s", s.raw)
	}
	if w := e.wallet(token, walletID); w["payout_reserved"] != json.Number("1015") || w["payout_balance"] != json.Number("10000") {
		t.Fatalf("wallet after the deadline: %v", w)
	}
	if s := e.call(e.payments, token, "GET", "/payment/transactions/"+id+"/status?doubleCheck=true", ""); s.status != 200 || s.str("data", "status") != "PROCESSING" {
		t.Fatalf("doubleCheck: %s", s.raw)
	}
	flagged := e.call(e.payments, token, "GET", "/payment/transactions?reconciliation_required=true", "")
	if len(flagged.items()) != 1 || flagged.items()[0].(map[string]any)["transaction_id"] != id {
		t.Fatalf("company's flagged list: %s", flagged.raw)
	}
	var console result
	deadline := time.Now().Add(10 * time.Second) // the console's list is a GSI, eventually consistent
	for {
		console = e.admin("GET", "/admin/payments?reconciliation_required=true", "")
		if len(console.items()) > 0 || time.Now().After(deadline) {
			break
		}
	}
	item, _ := console.items()[0].(map[string]any)
	if console.status != 200 || console.str("pagination", "total") != "1" || item["transaction_id"] != id || item["company_id"] != companyID || item["order_id"] != "SBX-"+id {
		t.Fatalf("console list: %s", console.raw)
	}
	if r := e.admin("GET", "/admin/payments", ""); r.status != 400 || r.str("field") != "reconciliation_required" {
		t.Fatalf("console list without the filter: %s", r.raw)
	}

	res := e.admin("POST", "/admin/payments/"+id+"/resolve", `{"status":"FAILED","note":"operator confirms it never paid (ticket 4411)"}`)
	if res.status != 200 || res.str("data", "status") != "FAILED" || res.str("data", "resolved_by") != "admin-api-key" ||
		res.str("data", "resolution_note") != "operator confirms it never paid (ticket 4411)" {
		t.Fatalf("resolve: %s", res.raw)
	}
	again := e.admin("POST", "/admin/payments/"+id+"/resolve", `{"status":"SUCCESS","note":"second thoughts"}`)
	if again.status != http.StatusConflict || again.str("code") != "PAYMENT_FINAL" {
		t.Fatalf("second resolution: %s", again.raw)
	}
	if w := e.wallet(token, walletID); w["payout_reserved"] != json.Number("0") || w["payout_available"] != json.Number("10000") {
		t.Fatalf("wallet after the refund: %v", w)
	}
	if s := e.status(token, id); s.str("data", "status") != "FAILED" || s.str("data", "reconciliation_required") != "false" {
		t.Fatalf("after the resolution: %s", s.raw)
	}
	if n := e.refunds(token, id); n != 1 {
		t.Fatalf("%d refunds", n)
	}
	e.verify(companyID)
}

// TestConsoleCreditOutsideSandbox: in production mode the console's
// sandbox credit is refused unless the stack allows it.
func TestConsoleCreditOutsideSandbox(t *testing.T) {
	e := newPaymentsTestEnv(t)
	_, _, walletID := e.company("")
	ctx := context.Background()
	for _, tt := range []struct {
		allow bool
		want  int
	}{{false, http.StatusForbidden}, {true, http.StatusOK}} {
		cfg := e.cfg
		cfg.Mode, cfg.AdminCreditInProduction = function.ModeProduction, tt.allow
		h, err := adminapi.New(ctx, recording(cfg, "admin"))
		if err != nil {
			t.Fatal(err)
		}
		r := e.call(h, "", "POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":10,"reference":"prod-1"}`,
			adminapi.KeyHeader, authTestAdminKey)
		if r.status != tt.want || (tt.want == 403 && r.str("code") != "CREDIT_DISABLED") {
			t.Fatalf("ADMIN_CREDIT_IN_PRODUCTION=%v: %s", tt.allow, r.raw)
		}
	}
}

// TestConflictIsA409WithRetryAfter: a write that keeps losing its race
// with other writes is a 409 with a stable code and Retry-After, never a
// 500.
func TestConflictIsA409WithRetryAfter(t *testing.T) {
	e := newPaymentsTestEnv(t)
	_, token, _ := e.company("1000")
	conflicting, _ := storetest.WithConflicts(store.New(e.db.Client, e.db.Table), 1<<30)
	p, err := services.Providers(e.cfg, conflicting, providers.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	gw, err := services.Operator(e.cfg, p)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := services.Payments(e.cfg, conflicting, gw, testQueue(e.cfg, e.cfg.PayoutsQueueURL),
		services.Events(conflicting, testQueue(e.cfg, e.cfg.WebhooksQueueURL)))
	if err != nil {
		t.Fatal(err)
	}
	guard, err := services.TokenGuard(e.cfg, e.db)
	if err != nil {
		t.Fatal(err)
	}
	rt := httpapi.NewRouter(function.Errors, guard)
	payments.Routes(rt, svc)
	h := httpadapter.NewV2(rt).ProxyWithContext
	r := e.call(h, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":10,"currency":"XAF"}`)
	if r.status != http.StatusConflict || r.str("code") != "CONFLICT" || r.headers["Retry-After"] != "1" {
		t.Fatalf("payout under endless conflicts: %d %s %v", r.status, r.raw, r.headers)
	}
}
