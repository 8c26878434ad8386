package e2e_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/webhooksapi"
	"payments/pkg/httpapi"
	"payments/pkg/store/schema"
)

// listRoute is a list of the API and the field that identifies its items.
type listRoute struct {
	name string
	h    function.HTTPHandler
	path string
	id   string
}

// listRoutes builds the wallets, payments and webhooks functions and a
// company whose every list has five items or more: six ledger entries,
// five payouts and their events, five debts. It returns the company's
// token and routes.
func listRoutes(t *testing.T) (*apptest.PaymentsTestEnv, string, []listRoute) {
	t.Helper()
	e := apptest.NewPaymentsTestEnv(t)
	hooks, err := webhooksapi.New(context.Background(), e.Cfg)
	if err != nil {
		t.Fatal(err)
	}
	companyID, token, wallet := e.Company("100000")
	for i := range 5 {
		e.PutDebt(companyID, 50, time.Now().UTC().Add(time.Duration(i-5)*time.Minute))
		body := fmt.Sprintf(`{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":100,"currency":"XAF","external_id":"walk-%d"}`, i)
		if r := e.Call(e.Payments, token, "POST", "/payment/payout", body); r.Status != 200 {
			t.Fatalf("payout: %s", r.Raw)
		}
	}
	return e, token, []listRoute{
		{"wallet transactions", e.Wallets, "/wallet/transactions", "id"},
		{"wallet ledger", e.Wallets, "/wallet/transactions/wallet/" + wallet, "id"},
		{"payment transactions", e.Payments, "/payment/transactions", "transaction_id"},
		{"webhook events", hooks, "/webhooks/events", "id"},
		{"events", hooks, "/events", "id"},
		{"debts", e.Wallets, "/debts", "id"},
	}
}

// TestListRoutesRefuseBadPaging sends extreme and malformed page, limit and
// cursor values to every list route, through the functions' own handlers
// (the operator console's lists of payments awaiting reconciliation and of
// customers awaiting review too):
// each is a 400 naming its parameter, never a 5xx; the extremes that are
// allowed answer 200.
func TestListRoutesRefuseBadPaging(t *testing.T) {
	e, token, routes := listRoutes(t)
	get := func(rt listRoute, token, query string) apptest.Result {
		t.Helper()
		if strings.HasPrefix(rt.name, "admin ") {
			return e.Admin("GET", rt.path+"&"+query, "")
		}
		return e.Call(rt.h, token, "GET", rt.path+"?"+query, "")
	}
	_, otherToken, _ := e.Company("")
	forged := base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"p":2,"t":5,"a":"` + schema.CompanyPK("x") + `","q":"x"}`))
	bad := []struct{ query, field string }{
		{"page=9223372036854775807", "page"},
		{"page=9223372036854775808", "page"},
		{"page=-9223372036854775808", "page"},
		{fmt.Sprintf("page=%d", httpapi.MaxPage+1), "page"},
		{"page=-1", "page"},
		{"page=0", "page"},
		{"page=1e3", "page"},
		{"page=1.0", "page"},
		{"page=%00", "page"},
		{"page=" + strings.Repeat("9", 400), "page"},
		{"limit=0", "limit"},
		{"limit=-1", "limit"},
		{"limit=101", "limit"},
		{"limit=1e9", "limit"},
		{"limit=1000000000", "limit"},
		{"limit=9223372036854775807", "limit"},
		{"limit=99999999999999999999", "limit"},
		{"limit=ten", "limit"},
		{"cursor=garbage", "cursor"},
		{"cursor=" + forged, "cursor"},
		{"cursor=" + strings.Repeat("A", 10000), "cursor"},
		{"cursor=%E2%80%AE", "cursor"},
		{"limit=5&cursor=9223372036854775807", "cursor"},
	}
	// The console's lists: cross-company work queues, walked by cursor only.
	admin := []listRoute{
		{"admin payments", e.AuthTestEnv.Admin, "/admin/payments?reconciliation_required=true", "transaction_id"},
		{"admin customers", e.AuthTestEnv.Admin, "/admin/customers?kyc_status=PENDING_REVIEW", "id"},
	}
	for _, rt := range append(routes, admin...) {
		console := strings.HasPrefix(rt.name, "admin ")
		for _, tt := range bad {
			t.Run(rt.name+"?"+tt.query, func(t *testing.T) {
				r := get(rt, token, tt.query)
				if r.Status != 400 || r.Str("code") != "INVALID_FIELD" || r.Str("field") != tt.field ||
					!strings.HasPrefix(r.Str("message"), tt.field+": ") {
					t.Fatalf("%d %s, want a 400 naming %s", r.Status, r.Raw, tt.field)
				}
			})
		}
		for _, query := range []string{fmt.Sprintf("page=%d", httpapi.MaxPage), "page=1&limit=100", "limit=1", "page=9999&limit=100"} {
			if console && !strings.HasPrefix(query, "page=1&") && query != "limit=1" {
				if r := get(rt, token, query); r.Status != 400 || r.Str("field") != "page" {
					t.Errorf("%s?%s: %d %s, want a 400 naming page: the console's list has no page numbers", rt.name, query, r.Status, r.Raw)
				}
				continue
			}
			t.Run(rt.name+"?"+query, func(t *testing.T) {
				r := get(rt, token, query)
				if r.Status != 200 || r.Str("meta", "next_cursor") != "<nil>" && !strings.HasPrefix(query, "limit=1") {
					t.Fatalf("%d %s", r.Status, r.Raw)
				}
			})
		}
		if console {
			continue // nothing awaits the console: no cursor to replay
		}

		// A real cursor of this route, sent with other filters, to another
		// route, or by another company, is refused.
		first := e.Call(rt.h, token, "GET", rt.path+"?limit=1", "")
		c := url.QueryEscape(first.Str("pagination", "next_cursor"))
		if first.Status != 200 || c == "%3Cnil%3E" {
			t.Fatalf("%s: no next_cursor: %s", rt.name, first.Raw)
		}
		others := []struct {
			name  string
			h     function.HTTPHandler
			token string
			path  string
		}{
			{"another limit", rt.h, token, rt.path + "?limit=2&cursor=" + c},
			{"another filter", rt.h, token, rt.path + "?limit=1&from_date=2025-01-01&cursor=" + c},
			{"another company", rt.h, otherToken, rt.path + "?limit=1&cursor=" + c},
		}
		for _, o := range routes {
			if o.path != rt.path {
				others = append(others, struct {
					name  string
					h     function.HTTPHandler
					token string
					path  string
				}{"sent to " + o.name, o.h, token, o.path + "?limit=1&cursor=" + c})
			}
		}
		for _, o := range others {
			t.Run(rt.name+" cursor, "+o.name, func(t *testing.T) {
				r := e.Call(o.h, o.token, "GET", o.path, "")
				if r.Status != 400 || r.Str("field") != "cursor" {
					t.Fatalf("%d %s, want a 400 naming cursor", r.Status, r.Raw)
				}
			})
		}
	}
}

// TestListRoutesWalkByCursor follows next_cursor on every list route, with
// and without a filter, and finds the items of one big page in the same
// order, each page carrying the total of the first and the spec's keys.
func TestListRoutesWalkByCursor(t *testing.T) {
	e, token, routes := listRoutes(t)
	filters := map[string]string{
		"/wallet/transactions":  "type=WITHDRAW",
		"/payment/transactions": "external_id=walk-&type=PAYOUT",
		"/webhooks/events":      "event=payment.payout.status_updated",
		"/events":               "type=payment.*",
		"/debts":                "status=pending",
	}
	ids := func(r apptest.Result, field string) []string {
		var out []string
		for _, it := range r.Items() {
			out = append(out, fmt.Sprint(it.(map[string]any)[field]))
		}
		return out
	}
	for _, rt := range routes {
		queries := []string{""}
		if f, ok := filters[rt.path]; ok {
			queries = append(queries, f)
		}
		for _, filter := range queries {
			t.Run(rt.name+"?"+filter, func(t *testing.T) {
				base := rt.path + "?" + filter
				whole := e.Call(rt.h, token, "GET", base+"&limit=100", "")
				want := ids(whole, rt.id)
				if whole.Status != 200 || len(want) < 5 || whole.Str("meta", "next_cursor") != "<nil>" {
					t.Fatalf("one page: %s", whole.Raw)
				}
				var got []string
				target := base + "&limit=2"
				for page := 1; ; page++ {
					r := e.Call(rt.h, token, "GET", target, "")
					if r.Status != 200 {
						t.Fatalf("page %d: %s", page, r.Raw)
					}
					meta := r.Str("meta")
					if meta != r.Str("pagination") || r.Str("meta", "page") != fmt.Sprint(page) || r.Str("meta", "limit") != "2" ||
						r.Str("meta", "total") != fmt.Sprint(len(want)) || r.Str("meta", "totalPages") != fmt.Sprint((len(want)+1)/2) {
						t.Fatalf("page %d: meta %s, pagination %s; want total %d", page, meta, r.Str("pagination"), len(want))
					}
					got = append(got, ids(r, rt.id)...)
					next := r.Str("meta", "next_cursor")
					if next == "<nil>" {
						break
					}
					if page > len(want) {
						t.Fatalf("still a next_cursor after %d pages", page)
					}
					target = base + "&limit=2&page=1&cursor=" + url.QueryEscape(next)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("walked %v, want %v", got, want)
				}
			})
		}
	}
}
