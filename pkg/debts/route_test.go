package debts_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"payments/pkg/app/apptest"
)

// TestConsoleCreditRecoversDebts credits a USD wallet's payout balance
// from the operator console while the company owes 0.50 USD: the debt is
// paid from the credit, the wallet keeps the rest, the ledger shows the
// FEE entry and GET /debts shows the debt recovered.
func TestConsoleCreditRecoversDebts(t *testing.T) {
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, walletID := e.UsdCompany()
	debtID := e.PutDebt(companyID, 50, time.Now().UTC().Add(-time.Minute))

	r := e.Admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":10,"reference":"top-up"}`)
	if r.Status != 200 || r.Str("data", "wallet", "payout_balance") != "9.5" || r.Str("data", "transaction", "amount") != "10" {
		t.Fatalf("credit: %s", r.Raw)
	}
	if got := fmt.Sprint(e.Wallet(token, walletID)["payout_balance"]); got != "9.5" {
		t.Errorf("payout_balance %v, want 9.5", got)
	}
	fees := e.Call(e.Wallets, token, "GET", "/wallet/transactions?type=FEE", "")
	if len(fees.Items()) != 1 || fees.Items()[0].(map[string]any)["reference"] != debtID {
		t.Errorf("FEE entries: %s", fees.Raw)
	}
	d := e.Call(e.Wallets, token, "GET", "/debts", "")
	if d.Status != 200 || len(d.Items()) != 1 {
		t.Fatalf("GET /debts: %s", d.Raw)
	}
	if it := d.Items()[0].(map[string]any); it["id"] != debtID || it["status"] != "RECOVERED" || it["recovered_at"] == nil ||
		!strings.Contains(d.Raw, `"remaining_amount":0,`) {
		t.Errorf("the debt after the credit: %s", d.Raw)
	}
	e.Verify(companyID)
}

// TestDebtsRoute lists the company's debts through the wallets function:
// newest first, filtered by status, a page at a time; another company
// sees none of them, and a bad status is a 400 naming it.
func TestDebtsRoute(t *testing.T) {
	e := apptest.NewPaymentsTestEnv(t)
	companyID, token, walletID := e.UsdCompany()
	_, other, _ := e.UsdCompany()
	base := time.Now().UTC().Add(-time.Hour)
	var made []string
	for i := range 3 {
		made = append(made, e.PutDebt(companyID, 100, base.Add(time.Duration(i)*time.Minute)))
	}
	// Pays the oldest; DynamoDB Local's transactions have no room for more.
	if r := e.Admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":1.5,"reference":"r1"}`); r.Status != 200 {
		t.Fatalf("credit: %s", r.Raw)
	}

	tests := []struct {
		name, token, query string
		status             int
		ids                []string // newest first
	}{
		{"all", token, "", 200, []string{made[2], made[1], made[0]}},
		{"pending", token, "?status=pending", 200, []string{made[2], made[1]}},
		{"recovered", token, "?status=RECOVERED", 200, []string{made[0]}},
		{"another company", other, "", 200, nil},
		{"bad status", token, "?status=paid", 400, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.Call(e.Wallets, tt.token, "GET", "/debts"+tt.query, "")
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Raw)
			}
			if tt.status != 200 {
				if r.Str("field") != "status" {
					t.Errorf("400 does not name status: %s", r.Raw)
				}
				return
			}
			var got []string
			for _, it := range r.Items() {
				got = append(got, it.(map[string]any)["id"].(string))
			}
			if strings.Join(got, ",") != strings.Join(tt.ids, ",") {
				t.Errorf("listed %v, want %v", got, tt.ids)
			}
		})
	}

	t.Run("a page at a time", func(t *testing.T) {
		var got []string
		target := "/debts?limit=2"
		for range 3 {
			r := e.Call(e.Wallets, token, "GET", target, "")
			if r.Status != 200 || r.Str("pagination", "total") != "3" {
				t.Fatalf("%s: %s", target, r.Raw)
			}
			for _, it := range r.Items() {
				got = append(got, it.(map[string]any)["id"].(string))
			}
			next := r.Str("pagination", "next_cursor")
			if next == "<nil>" {
				break
			}
			target = "/debts?limit=2&cursor=" + next
		}
		if strings.Join(got, ",") != strings.Join([]string{made[2], made[1], made[0]}, ",") {
			t.Errorf("walked %v", got)
		}
	})
}
