package e2e_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"payments/pkg/app/apptest"
	"payments/pkg/store/moneystore"
	"payments/pkg/waittest"
)

// TestConsoleListIsAList: the console's list of payments awaiting
// reconciliation answers as every list does, data an array and the
// pagination object under meta and pagination, and a walk by its cursor
// shows each flagged payment once, oldest first, with the total counted on
// the first page.
func TestConsoleListIsAList(t *testing.T) {
	e := apptest.NewPaymentsTestEnv(t)
	ctx := context.Background()
	st := moneystore.NewPayments(e.DB)
	var want []string
	for range 2 {
		companyID, token, _ := e.Company("10000")
		for range 3 {
			r := e.Call(e.Payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":100,"currency":"XAF"}`)
			if r.Status != 200 {
				t.Fatalf("payout: %s", r.Raw)
			}
			p, err := st.GetPayment(ctx, companyID, r.Str("data", "transaction_id"))
			if err != nil {
				t.Fatal(err)
			}
			flagged := p
			flagged.ReconciliationRequired = true
			if err := st.Reschedule(ctx, flagged, p.NextPollAt); err != nil {
				t.Fatal(err)
			}
			want = append(want, p.ID)
		}
	}
	slices.Sort(want) // ids are UUID v7: the list is oldest first

	const query = "/admin/payments?reconciliation_required=true&limit=4"
	var first apptest.Result
	waittest.Until(t, 10*time.Second, "the index holds the six flagged payments", func() bool {
		first = e.Admin("GET", query, "")
		return first.Status == 200 && len(first.Items()) == 4
	})
	var got []string
	r := first
	for page := 1; ; page++ {
		if r.Status != 200 || r.Items() == nil {
			t.Fatalf("page %d: %s", page, r.Raw)
		}
		for _, field := range []string{"page", "limit", "total", "totalPages", "next_cursor"} {
			if m, p := r.Str("meta", field), r.Str("pagination", field); m != p {
				t.Fatalf("page %d: meta.%s %s, pagination.%s %s", page, field, m, field, p)
			}
		}
		if r.Str("meta", "page") != fmt.Sprint(page) || r.Str("meta", "total") != "6" || r.Str("meta", "totalPages") != "2" || r.Str("meta", "limit") != "4" {
			t.Fatalf("page %d: pagination %s", page, r.Raw)
		}
		for _, it := range r.Items() {
			got = append(got, it.(map[string]any)["transaction_id"].(string))
		}
		next := r.Str("pagination", "next_cursor")
		if next == "<nil>" {
			break
		}
		if page == 2 {
			t.Fatalf("a third page: %s", r.Raw)
		}
		r = e.Admin("GET", query+"&cursor="+url.QueryEscape(next), "")
	}
	if !slices.Equal(got, want) {
		t.Fatalf("walked %v, want %v", got, want)
	}
}
