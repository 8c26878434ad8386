package app

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"payments/pkg/store"
	"payments/pkg/waittest"
)

// TestConsoleListIsAList: the console's list of payments awaiting
// reconciliation answers as every list does, data an array and the
// pagination object under meta and pagination, and a walk by its cursor
// shows each flagged payment once, oldest first, with the total counted on
// the first page.
func TestConsoleListIsAList(t *testing.T) {
	e := newPaymentsTestEnv(t)
	ctx := context.Background()
	st := store.NewPayments(e.db)
	var want []string
	for range 2 {
		companyID, token, _ := e.company("10000")
		for range 3 {
			r := e.call(e.payments, token, "POST", "/payment/payout", `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":100,"currency":"XAF"}`)
			if r.status != 200 {
				t.Fatalf("payout: %s", r.raw)
			}
			p, err := st.GetPayment(ctx, companyID, r.str("data", "transaction_id"))
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
	var first result
	waittest.Until(t, 10*time.Second, "the index holds the six flagged payments", func() bool {
		first = e.admin("GET", query, "")
		return first.status == 200 && len(first.items()) == 4
	})
	var got []string
	r := first
	for page := 1; ; page++ {
		if r.status != 200 || r.items() == nil {
			t.Fatalf("page %d: %s", page, r.raw)
		}
		for _, field := range []string{"page", "limit", "total", "totalPages", "next_cursor"} {
			if m, p := r.str("meta", field), r.str("pagination", field); m != p {
				t.Fatalf("page %d: meta.%s %s, pagination.%s %s", page, field, m, field, p)
			}
		}
		if r.str("meta", "page") != fmt.Sprint(page) || r.str("meta", "total") != "6" || r.str("meta", "totalPages") != "2" || r.str("meta", "limit") != "4" {
			t.Fatalf("page %d: pagination %s", page, r.raw)
		}
		for _, it := range r.items() {
			got = append(got, it.(map[string]any)["transaction_id"].(string))
		}
		next := r.str("pagination", "next_cursor")
		if next == "<nil>" {
			break
		}
		if page == 2 {
			t.Fatalf("a third page: %s", r.raw)
		}
		r = e.admin("GET", query+"&cursor="+url.QueryEscape(next), "")
	}
	if !slices.Equal(got, want) {
		t.Fatalf("walked %v, want %v", got, want)
	}
}
