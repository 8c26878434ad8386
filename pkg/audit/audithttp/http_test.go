package audithttp_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"payments/pkg/app/apptest"
	"payments/pkg/function/adminapi"
)

// records reads the trail's records of action, newest first.
func records(e *apptest.PaymentsTestEnv, query url.Values) []map[string]any {
	e.T.Helper()
	r := e.Admin("GET", "/admin/audit?"+query.Encode(), "")
	if r.Status != 200 {
		e.T.Fatalf("GET /admin/audit: %s", r.Raw)
	}
	var out []map[string]any
	for _, it := range r.Items() {
		out = append(out, it.(map[string]any))
	}
	return out
}

// TestConsoleChangesAreRecorded: a credit and a company's creation through
// the console each leave two records, the request's before the answer's,
// naming the operator, the route, its ids and the company, the client's
// key withheld; reads leave none.
func TestConsoleChangesAreRecorded(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, _, walletID := e.Company("")
	if r := e.Admin("GET", "/admin/companies/"+companyID, ""); r.Status != 200 {
		t.Fatalf("read the company: %s", r.Raw)
	}
	if r := e.Admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":10000,"reference":"opening"}`); r.Status != 200 {
		t.Fatalf("credit: %s", r.Raw)
	}
	// The request's record knows the wallet; the answer's, the company too.
	var credit []map[string]any
	for _, r := range records(e, url.Values{"action": {"POST /admin/wallets/{walletId}/credit"}}) {
		if r["targets"].(map[string]any)["walletId"] == walletID {
			credit = append(credit, r)
		}
	}
	if len(credit) != 2 {
		t.Fatalf("the credit's records: %v, want 2", credit)
	}
	answered, requested := credit[0], credit[1]
	for k, want := range map[string]string{"phase": "ANSWERED", "status": "200", "operator": "admin-api-key", "company_id": companyID, "request": "<nil>"} {
		if fmt.Sprint(answered[k]) != want {
			t.Errorf("the answer's record: %s = %v, want %v", k, answered[k], want)
		}
	}
	if requested["phase"] != "REQUESTED" || requested["status"] != nil || requested["request_id"] != answered["request_id"] ||
		requested["targets"].(map[string]any)["walletId"] != walletID || fmt.Sprint(requested["request"].(map[string]any)["amount"]) != "10000" {
		t.Errorf("the request's record: %v", requested)
	}
	if answered["answer"].(map[string]any)["data"] == nil {
		t.Errorf("the answer's record keeps no answer: %v", answered)
	}
	created := records(e, url.Values{"action": {"POST /admin/companies"}, "company_id": {companyID}})
	if len(created) != 1 { // the request's record names no company yet
		t.Fatalf("the creation's records: %v", created)
	}
	data := created[0]["answer"].(map[string]any)["data"].(map[string]any)
	if data["client_key"] != "[withheld]" || data["client_id"] == "" || data["id"] != companyID {
		t.Errorf("the creation's answer as recorded: %v", data)
	}
	for _, r := range records(e, url.Values{"company_id": {companyID}}) {
		if r["action"] == "GET /admin/companies/{id}" {
			t.Errorf("a read was recorded: %v", r)
		}
	}
	if r := e.Admin("GET", "/admin/audit?to=yesterday", ""); r.Status != 400 || r.Str("field") != "to" {
		t.Errorf("a bad to: %d %s", r.Status, r.Raw)
	}
}

// TestUnrecordedChangeIsNotMade: when the trail cannot be written, a
// credit is answered 503 CHANGE_NOT_AUDITED and the wallet does not move.
func TestUnrecordedChangeIsNotMade(t *testing.T) {
	t.Parallel()
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, walletID := e.Company("")
	cfg := apptest.FailingWith(e.Cfg, func(in any) bool {
		put, ok := in.(*dynamodb.PutItemInput)
		return ok && *put.TableName == e.Cfg.AuditTableName
	}, errors.New("injected: the audit table cannot be reached"))
	h, err := adminapi.NewWith(context.Background(), apptest.Recording(cfg, "admin"), e.Caches, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	r := e.Call(h, "", "POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":10000,"reference":"opening"}`,
		adminapi.KeyHeader, apptest.AuthTestAdminKey)
	if r.Status != 503 || r.Str("code") != "CHANGE_NOT_AUDITED" || r.Headers["Retry-After"] == "" {
		t.Fatalf("credit without its record: %d %s", r.Status, r.Raw)
	}
	if w := e.Wallet(token, walletID); fmt.Sprint(w["payout_balance"]) != "0" {
		t.Errorf("the wallet moved: %v", w)
	}
	e.Verify(companyID)
}
