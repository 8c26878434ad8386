package app

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

	"payments/pkg/ids"
	"payments/pkg/timestamp"
)

// putDebt writes a pending debt of amount cents of the company, created
// at, as the card fee code records one: the record DEBT#<id> and its
// marker PENDINGDEBT#<id> (pkg/store/debts.go). It returns the debt id.
func (e *paymentsTestEnv) putDebt(companyID string, amount int64, at time.Time) string {
	e.t.Helper()
	id := ids.NewV7(at)
	for sk, kind := range map[string]string{"DEBT#" + id: "debt", "PENDINGDEBT#" + id: "debt_pending"} {
		item, err := attributevalue.MarshalMap(map[string]any{
			"PK": "COMPANY#" + companyID, "SK": sk, "type": kind, "id": id, "company_id": companyID,
			"fee_type": "payment_failure", "transaction_id": uuid.NewString(), "card_id": uuid.NewString(),
			"customer_id": uuid.NewString(), "amount": amount, "remaining": amount, "status": "PENDING",
			"created_at": timestamp.Format(at),
		})
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.db.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.db.Table), Item: item}); err != nil {
			e.t.Fatal(err)
		}
	}
	return id
}

// usdCompany creates an approved company with an empty USD wallet and
// returns its id, a token and the wallet id.
func (e *paymentsTestEnv) usdCompany() (id, token, walletID string) {
	e.t.Helper()
	id, token, _ = e.company("")
	r := e.call(e.wallets, token, "POST", "/wallets", `{"currency":"USD","country":"United States","country_iso_code":"US","country_phone_code":"+1"}`)
	if r.status != 201 {
		e.t.Fatalf("USD wallet: %s", r.raw)
	}
	return id, token, r.str("data", "id")
}

// TestConsoleCreditRecoversDebts credits a USD wallet's payout balance
// from the operator console while the company owes 0.50 USD: the debt is
// paid from the credit, the wallet keeps the rest, the ledger shows the
// FEE entry and GET /debts shows the debt recovered.
func TestConsoleCreditRecoversDebts(t *testing.T) {
	e := newPaymentsTestEnv(t)
	companyID, token, walletID := e.usdCompany()
	debtID := e.putDebt(companyID, 50, time.Now().UTC().Add(-time.Minute))

	r := e.admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":10,"reference":"top-up"}`)
	if r.status != 200 || r.str("data", "wallet", "payout_balance") != "9.5" || r.str("data", "transaction", "amount") != "10" {
		t.Fatalf("credit: %s", r.raw)
	}
	if got := fmt.Sprint(e.wallet(token, walletID)["payout_balance"]); got != "9.5" {
		t.Errorf("payout_balance %v, want 9.5", got)
	}
	fees := e.call(e.wallets, token, "GET", "/wallet/transactions?type=FEE", "")
	if len(fees.items()) != 1 || fees.items()[0].(map[string]any)["reference"] != debtID {
		t.Errorf("FEE entries: %s", fees.raw)
	}
	d := e.call(e.wallets, token, "GET", "/debts", "")
	if d.status != 200 || len(d.items()) != 1 {
		t.Fatalf("GET /debts: %s", d.raw)
	}
	if it := d.items()[0].(map[string]any); it["id"] != debtID || it["status"] != "RECOVERED" || it["recovered_at"] == nil ||
		!strings.Contains(d.raw, `"remaining_amount":0,`) {
		t.Errorf("the debt after the credit: %s", d.raw)
	}
	e.verify(companyID)
}

// TestDebtsRoute lists the company's debts through the wallets function:
// newest first, filtered by status, a page at a time; another company
// sees none of them, and a bad status is a 400 naming it.
func TestDebtsRoute(t *testing.T) {
	e := newPaymentsTestEnv(t)
	companyID, token, walletID := e.usdCompany()
	_, other, _ := e.usdCompany()
	base := time.Now().UTC().Add(-time.Hour)
	var made []string
	for i := range 3 {
		made = append(made, e.putDebt(companyID, 100, base.Add(time.Duration(i)*time.Minute)))
	}
	// Pays the oldest; DynamoDB Local's transactions have no room for more.
	if r := e.admin("POST", "/admin/wallets/"+walletID+"/credit", `{"balance":"payout","amount":1.5,"reference":"r1"}`); r.status != 200 {
		t.Fatalf("credit: %s", r.raw)
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
			r := e.call(e.wallets, tt.token, "GET", "/debts"+tt.query, "")
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.raw)
			}
			if tt.status != 200 {
				if r.str("field") != "status" {
					t.Errorf("400 does not name status: %s", r.raw)
				}
				return
			}
			var got []string
			for _, it := range r.items() {
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
			r := e.call(e.wallets, token, "GET", target, "")
			if r.status != 200 || r.str("pagination", "total") != "3" {
				t.Fatalf("%s: %s", target, r.raw)
			}
			for _, it := range r.items() {
				got = append(got, it.(map[string]any)["id"].(string))
			}
			next := r.str("pagination", "next_cursor")
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
