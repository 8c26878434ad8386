package debtshttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"payments/pkg/apidoc/apitest"
	"payments/pkg/debts"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/function/adminapi"
	"payments/pkg/httpapi"
	"payments/pkg/page"
)

// fakeStore holds debts by company, newest first, and records the last
// query.
type fakeStore struct {
	byCompany map[string][]debts.Debt
	company   string
	status    debts.Status
	page      page.Request
}

func (f *fakeStore) List(_ context.Context, companyID string, status debts.Status, p page.Request) (page.Result[debts.Debt], error) {
	f.company, f.status, f.page = companyID, status, p
	var match []debts.Debt
	for _, d := range f.byCompany[companyID] {
		if status == "" || d.Status == status {
			match = append(match, d)
		}
	}
	lo := min(p.Skip(), len(match))
	hi := min(lo+p.Limit, len(match))
	return page.Result[debts.Debt]{Items: match[lo:hi], Total: len(match)}, nil
}

// serve answers GET /debts?query as company.
func serve(t *testing.T, f *fakeStore, company, query string) (int, map[string]any) {
	t.Helper()
	rt := httpapi.NewRouter(adminapi.Errors, func(r *http.Request) (context.Context, error) {
		return httpapi.WithCompany(r.Context(), r.Header.Get("X-Company")), nil
	})
	debtshttp.Routes(rt, debts.NewService(f))
	req := httptest.NewRequest("GET", httpapi.BasePath+"/debts?"+query, nil)
	req.Header.Set("X-Company", company)
	rec := httptest.NewRecorder()
	rt.ServeHTTP(rec, req)
	apitest.CheckRecorded(t, req, nil, rec)
	var body map[string]any
	dec := json.NewDecoder(rec.Body)
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("body: %v", err)
	}
	return rec.Code, body
}

func TestListRoute(t *testing.T) {
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	paid := at.Add(time.Hour)
	f := &fakeStore{byCompany: map[string][]debts.Debt{
		"a": {
			{ID: "d2", CompanyID: "a", FeeType: debts.FeeCrossborder, TransactionID: "t2", CardID: "c", CustomerID: "u",
				Amount: 125, Remaining: 75, Status: debts.Pending, CreatedAt: at.Add(time.Minute)},
			{ID: "d1", CompanyID: "a", FeeType: debts.FeePaymentFailure, TransactionID: "t1", CardID: "c", CustomerID: "u",
				Amount: 50, Remaining: 0, Status: debts.Recovered, CreatedAt: at, RecoveredAt: &paid},
		},
		"b": {{ID: "d3", CompanyID: "b", FeeType: debts.FeePaymentFailure, TransactionID: "t3", CardID: "c3", CustomerID: "u3", Amount: 50, Remaining: 50, Status: debts.Pending, CreatedAt: at}},
	}}

	tests := []struct {
		name, company, query string
		status               int
		field                string // the field a 400 names
		wantStatus           debts.Status
		wantPage             page.Request
		ids                  string
	}{
		{"all", "a", "", 200, "", "", page.Request{Page: 1, Limit: 20}, "d2,d1"},
		{"pending, any case", "a", "status=pending", 200, "", debts.Pending, page.Request{Page: 1, Limit: 20}, "d2"},
		{"recovered", "a", "status=RECOVERED", 200, "", debts.Recovered, page.Request{Page: 1, Limit: 20}, "d1"},
		{"a page", "a", "page=2&limit=1", 200, "", "", page.Request{Page: 2, Limit: 1}, "d1"},
		{"the largest page", "a", "limit=100", 200, "", "", page.Request{Page: 1, Limit: 100}, "d2,d1"},
		{"another company", "b", "", 200, "", "", page.Request{Page: 1, Limit: 20}, "d3"},
		{"unknown status", "a", "status=PAID", 400, "status", "", page.Request{}, ""},
		{"limit too large", "a", "limit=101", 400, "limit", "", page.Request{}, ""},
		{"page 0", "a", "page=0", 400, "page", "", page.Request{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.company, f.status, f.page = "", "", page.Request{}
			code, body := serve(t, f, tt.company, tt.query)
			if code != tt.status {
				t.Fatalf("status %d, want %d: %v", code, tt.status, body)
			}
			if tt.status != 200 {
				msg, _ := body["message"].(string)
				if body["field"] != tt.field || !strings.HasPrefix(msg, tt.field+": ") || f.company != "" {
					t.Errorf("400 %v, want one naming %s; the store was read: %v", body, tt.field, f.company != "")
				}
				return
			}
			if f.company != tt.company || f.status != tt.wantStatus || f.page != tt.wantPage {
				t.Errorf("store asked for %s, %q, %+v", f.company, f.status, f.page)
			}
			var ids []string
			for _, it := range body["data"].([]any) {
				ids = append(ids, it.(map[string]any)["id"].(string))
			}
			if strings.Join(ids, ",") != tt.ids {
				t.Errorf("listed %v, want %s", ids, tt.ids)
			}
		})
	}

	t.Run("an item", func(t *testing.T) {
		_, body := serve(t, f, "a", "")
		items := body["data"].([]any)
		pending, recovered := items[0].(map[string]any), items[1].(map[string]any)
		want := map[string]any{
			"id": "d2", "amount": json.Number("1.25"), "remaining_amount": json.Number("0.75"), "currency": "USD",
			"status": "PENDING", "fee_type": "crossborder", "transaction_id": "t2", "card_id": "c", "customer_id": "u",
			"created_at": "2026-11-01T10:01:00.000Z", "recovered_at": nil,
		}
		if len(pending) != len(want) {
			t.Errorf("item %v, want the keys of %v", pending, want)
		}
		for k, v := range want {
			if pending[k] != v {
				t.Errorf("%s = %#v, want %#v", k, pending[k], v)
			}
		}
		if recovered["recovered_at"] != "2026-11-01T11:00:00.000Z" || recovered["remaining_amount"] != json.Number("0") {
			t.Errorf("recovered item %v", recovered)
		}
		if p := body["pagination"].(map[string]any); p["total"] != json.Number("2") || p["limit"] != json.Number("20") {
			t.Errorf("pagination %v", p)
		}
	})
}
