package e2e_test

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"payments/pkg/apidoc/apitest"
	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/store/schema"
)

// listRoute is a list of the API and the field that identifies its items.
type listRoute struct {
	name    string // the path as the document writes it
	h       function.HTTPHandler
	path    string // the path to list, with its ids and the query it requires
	id      string
	filter  string // a query the walk follows too, "" for none
	console bool   // one of the operator console's lists (the admin key; every company's)
	// cursorOnly: the list has no page numbers (page above 1 without a
	// cursor is a 400), as the console's work queues.
	cursorOnly bool

	firstPage, lastPage int // the page numbers it allows
}

// target returns the route's path with query added to its own.
func (rt listRoute) target(query string) string { return withQuery(rt.path, query) }

// withQuery returns path with query added to its own, if any.
func withQuery(path, query string) string {
	switch {
	case query == "":
		return path
	case strings.Contains(path, "?"):
		return path + "&" + query
	}
	return path + "?" + query
}

// get sends GET target to the list's function, with token, or the admin
// key for the console's lists.
func (e *listEnv) get(rt listRoute, token, target string) apptest.Result {
	e.T.Helper()
	if rt.console {
		return e.Call(rt.h, "", "GET", target, "", adminapi.KeyHeader, apptest.AuthTestAdminKey)
	}
	return e.Call(rt.h, token, "GET", target, "")
}

// listEnv is the lists environment with one company, its token and XAF
// wallet, and what the fixtures made that several lists share.
type listEnv struct {
	*apptest.ListsTestEnv
	companyID, token, wallet string
	payouts                  []string // the five payouts' ids, oldest first

	cardID, customerID string   // card, made once
	settlements        []string // its purchases' settlements
	batches            []string // bulk batches, made once
}

// card gives the company a card with five settled purchases, once.
func (e *listEnv) card() string {
	if e.cardID == "" {
		e.cardID, e.customerID, e.settlements = e.CardWithPurchases(e.token, 5)
	}
	return e.cardID
}

// bulk gives the company five batches of five payouts, once.
func (e *listEnv) bulk() []string {
	if e.batches == nil {
		e.batches = e.BulkPayouts(e.token, 5, 5)
	}
	return e.batches
}

// listFixture is what the document cannot say of one of its lists: how to
// give it five items or more.
type listFixture struct {
	// fill fills the list and returns the path to list it, with its ids
	// and the query the route requires.
	fill func(e *listEnv) string
	// filter is a query the walk follows too; "" for none.
	filter string
	// cursorOnly: the list has no page numbers (page above 1 without a
	// cursor is a 400), as the console's work queues.
	cursorOnly bool
}

// listFixtures fills every list of the document (apitest's PagedRoutes),
// by its path as the document writes it: a list of the document without
// one fails the list tests.
var listFixtures = map[string]listFixture{
	"/wallet/transactions":                   {fill: func(e *listEnv) string { return "/wallet/transactions" }, filter: "type=WITHDRAW"},
	"/wallet/transactions/wallet/{walletId}": {fill: func(e *listEnv) string { return "/wallet/transactions/wallet/" + e.wallet }},
	"/payment/transactions":                  {fill: func(e *listEnv) string { return "/payment/transactions" }, filter: "external_id=walk-&type=PAYOUT"},
	"/webhooks/events":                       {fill: func(e *listEnv) string { return "/webhooks/events" }, filter: "event=payment.payout.status_updated"},
	"/events":                                {fill: func(e *listEnv) string { return "/events" }, filter: "type=payment.*"},
	"/debts":                                 {fill: func(e *listEnv) string { return "/debts" }, filter: "status=pending"},
	"/customers": {fill: func(e *listEnv) string {
		e.EnrollCustomers(e.token, 5)
		return "/customers"
	}},
	"/cards/{id}/transactions":     {fill: func(e *listEnv) string { return "/cards/" + e.card() + "/transactions" }, filter: "type=SETTLEMENT"},
	"/customers/{id}/transactions": {fill: func(e *listEnv) string { e.card(); return "/customers/" + e.customerID + "/transactions" }},
	"/cards/{id}/reveals": {fill: func(e *listEnv) string {
		e.Reveal(e.token, e.card(), 5)
		return "/cards/" + e.cardID + "/reveals"
	}},
	"/cards/disputes": {fill: func(e *listEnv) string {
		e.card()
		e.Dispute(e.token, e.settlements)
		return "/cards/disputes"
	}},
	"/payment/payouts/bulk":                 {fill: func(e *listEnv) string { e.bulk(); return "/payment/payouts/bulk" }},
	"/payment/payouts/bulk/{batchId}/items": {fill: func(e *listEnv) string { return "/payment/payouts/bulk/" + e.bulk()[0] + "/items" }},
	// The console's lists: cross-company work queues and reports.
	"/admin/payments": {fill: func(e *listEnv) string {
		e.FlagForReconciliation(e.companyID, e.payouts)
		return "/admin/payments?reconciliation_required=true"
	}, cursorOnly: true},
	"/admin/customers": {fill: func(e *listEnv) string {
		for i := range 5 {
			e.PendingReviewCustomer(e.companyID, fmt.Sprintf("review-%d@example.com", i), fmt.Sprintf("REVIEW-%d", i))
		}
		return "/admin/customers?kyc_status=PENDING_REVIEW"
	}, cursorOnly: true},
	"/admin/reconciliations": {fill: func(e *listEnv) string { e.Reconcile(5); return "/admin/reconciliations" }},
	// The console's changes made to fill the others (companies, credits).
	"/admin/audit": {fill: func(e *listEnv) string { return "/admin/audit" }, filter: "operator=admin-api-key"},
}

// listRoutes builds every HTTP function and a company with six ledger
// entries, five payouts and their events and five debts, and fills every
// list of the document with five items or more (listFixtures), each
// served by the function template.yaml wires it to. It returns the
// company's token and the lists.
func listRoutes(t *testing.T) (*listEnv, string, []listRoute) {
	t.Helper()
	e := &listEnv{ListsTestEnv: apptest.NewListsTestEnv(t)}
	e.companyID, e.token, e.wallet = e.Company("100000")
	e.card() // first: the funding of its USD wallet would recover the debts
	for i := range 5 {
		e.PutDebt(e.companyID, 50, time.Now().UTC().Add(time.Duration(i-5)*time.Minute))
		body := fmt.Sprintf(`{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":100,"currency":"XAF","external_id":"walk-%d"}`, i)
		r := e.Call(e.Payments, e.token, "POST", "/payment/payout", body)
		if r.Status != 200 {
			t.Fatalf("payout: %s", r.Raw)
		}
		e.payouts = append(e.payouts, r.Str("data", "transaction_id"))
	}
	handlers := templateHandlers(t, e.Cfg, e.Caches, map[string]function.HTTPHandler{
		"wallets": e.Wallets, "payments": e.Payments, "admin": e.AuthTestEnv.Admin, "customers": e.Customers,
		"webhooks": e.Webhooks, "cards": e.Cards, "card-network": e.Network,
	})
	var routes []listRoute
	documented := map[string]bool{}
	for _, pr := range apitest.Default(t).PagedRoutes() {
		documented[pr.Path] = true
		f, ok := listFixtures[pr.Path]
		if !ok {
			t.Errorf("%s: a list of the document without a fixture in listFixtures", pr.Path)
			continue
		}
		if pr.ItemID == "" {
			t.Errorf("%s: the document does not say which field identifies its items", pr.Path)
			continue
		}
		h := handlers[pr.String()]
		if h == nil {
			t.Errorf("%s: no function of template.yaml serves it", pr)
			continue
		}
		routes = append(routes, listRoute{name: pr.Path, h: h, path: f.fill(e), id: pr.ItemID, filter: f.filter,
			console: slices.Contains(pr.Op.Tags, "console"), cursorOnly: f.cursorOnly, firstPage: pr.FirstPage, lastPage: pr.LastPage})
	}
	for path := range listFixtures {
		if !documented[path] {
			t.Errorf("listFixtures: %s is no list of the document", path)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return e, e.token, routes
}

// TestListRoutesRefuseBadPaging sends extreme and malformed page, limit and
// cursor values to every list of the document, through the handler of the
// function that serves it (the operator console's lists too):
// each is a 400 naming its parameter, never a 5xx; the extremes that are
// allowed answer 200.
func TestListRoutesRefuseBadPaging(t *testing.T) {
	e, token, routes := listRoutes(t)
	get := func(rt listRoute, token, query string) apptest.Result {
		t.Helper()
		return e.get(rt, token, rt.target(query))
	}
	_, otherToken, _ := e.Company("")
	forged := base64.RawURLEncoding.EncodeToString([]byte(`{"v":1,"p":2,"t":5,"a":"` + schema.CompanyPK("x") + `","q":"x"}`))
	// The page numbers below a list's first (0 or 1) and past its last
	// (httpapi.MaxPage, or one less on a list numbered from 0) are added
	// for each.
	bad := []struct{ query, field string }{
		{"page=9223372036854775807", "page"},
		{"page=9223372036854775808", "page"},
		{"page=-9223372036854775808", "page"},
		{"page=-1", "page"},
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
	for _, rt := range routes {
		outside := []struct{ query, field string }{
			{fmt.Sprintf("page=%d", rt.lastPage+1), "page"},
			{fmt.Sprintf("page=%d", rt.firstPage-1), "page"},
		}
		for _, tt := range append(outside, bad...) {
			t.Run(rt.name+"?"+tt.query, func(t *testing.T) {
				r := get(rt, token, tt.query)
				if r.Status != 400 || r.Str("code") != "INVALID_FIELD" || r.Str("field") != tt.field ||
					!strings.HasPrefix(r.Str("message"), tt.field+": ") {
					t.Fatalf("%d %s, want a 400 naming %s", r.Status, r.Raw, tt.field)
				}
			})
		}
		for _, query := range []string{fmt.Sprintf("page=%d", rt.lastPage), "page=1&limit=100", "limit=1", "page=9999&limit=100"} {
			if rt.cursorOnly && !strings.HasPrefix(query, "page=1&") && query != "limit=1" {
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
		if rt.console {
			continue // a list of every company: no company's cursor to replay
		}

		// A real cursor of this route, sent with other filters, to another
		// route, or by another company, is refused.
		first := e.Call(rt.h, token, "GET", rt.target("limit=1"), "")
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
			{"another limit", rt.h, token, rt.target("limit=2&cursor=" + c)},
			{"another filter", rt.h, token, rt.target("limit=1&from_date=2025-01-01&cursor=" + c)},
			{"another company", rt.h, otherToken, rt.target("limit=1&cursor=" + c)},
		}
		for _, o := range routes {
			if o.path != rt.path && !o.console {
				others = append(others, struct {
					name  string
					h     function.HTTPHandler
					token string
					path  string
				}{"sent to " + o.name, o.h, token, o.target("limit=1&cursor=" + c)})
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
	ids := func(r apptest.Result, field string) []string {
		var out []string
		for _, it := range r.Items() {
			out = append(out, fmt.Sprint(it.(map[string]any)[field]))
		}
		return out
	}
	for _, rt := range routes {
		queries := []string{""}
		if rt.filter != "" {
			queries = append(queries, rt.filter)
		}
		for _, filter := range queries {
			t.Run(rt.name+"?"+filter, func(t *testing.T) {
				base := rt.target(filter)
				whole := e.get(rt, token, withQuery(base, "limit=100"))
				want := ids(whole, rt.id)
				if whole.Status != 200 || len(want) < 5 || whole.Str("meta", "next_cursor") != "<nil>" {
					t.Fatalf("one page: %s", whole.Raw)
				}
				var got []string
				target := withQuery(base, "limit=2")
				for page := 1; ; page++ {
					r := e.get(rt, token, target)
					if r.Status != 200 {
						t.Fatalf("page %d: %s", page, r.Raw)
					}
					meta := r.Str("meta")
					if meta != r.Str("pagination") || r.Str("meta", "page") != fmt.Sprint(rt.firstPage+page-1) || r.Str("meta", "limit") != "2" ||
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
					target = withQuery(base, "limit=2&page=1&cursor="+url.QueryEscape(next))
				}
				if !slices.Equal(got, want) {
					t.Fatalf("walked %v, want %v", got, want)
				}
			})
		}
	}
}
