package apitest

import (
	"slices"
	"testing"

	"payments/pkg/httpapi"
)

// TestPagedRoutes: the document's lists, with what it says of their items
// and page numbers.
func TestPagedRoutes(t *testing.T) {
	c := Default(t)
	got := map[string]PagedRoute{}
	for _, r := range c.PagedRoutes() {
		if r.Method != "GET" || r.Op.Parameters.GetByInAndName("query", "cursor") == nil {
			t.Errorf("%s: not a GET with a cursor", r)
		}
		got[r.Path] = r
	}
	for _, tc := range []struct {
		path, id    string
		first, last int
	}{
		{"/wallet/transactions", "id", 1, httpapi.MaxPage},
		{"/payment/transactions", "transaction_id", 1, httpapi.MaxPage},
		{"/payment/payouts/bulk", "batch_id", 1, httpapi.MaxPage},
		{"/cards/{id}/transactions", "id", 0, httpapi.MaxPage - 1},
		{"/admin/payments", "transaction_id", 1, httpapi.MaxPage},
	} {
		r, ok := got[tc.path]
		if !ok || r.ItemID != tc.id || r.FirstPage != tc.first || r.LastPage != tc.last {
			t.Errorf("%s: %v %q pages %d to %d, want a list of %q, pages %d to %d", tc.path, ok, r.ItemID, r.FirstPage, r.LastPage, tc.id, tc.first, tc.last)
		}
	}
	if _, ok := got["/wallets"]; ok {
		t.Error("GET /wallets, which takes no cursor, is a list")
	}
}

// TestFind: a request's operation, found as the router finds it.
func TestFind(t *testing.T) {
	c := Default(t)
	for _, tc := range []struct{ method, target, want string }{
		{"POST", "/cards/c_1/fund", "POST /cards/{id}/fund"},
		{"GET", "/cards/disputes?status=failed", "GET /cards/disputes"},
		{"GET", "/cards/c_1/transactions", "GET /cards/{id}/transactions"},
		{"GET", "/no/such/route", ""},
		{"DELETE", "/cards", ""},
	} {
		o, ok := c.Find(tc.method, tc.target)
		if got := map[bool]string{true: o.String()}[ok]; got != tc.want {
			t.Errorf("%s %s: %q, want %q", tc.method, tc.target, got, tc.want)
		}
	}
}

// TestIdempotentRoutes: the routes whose operation takes Idempotency-Key,
// and only those.
func TestIdempotentRoutes(t *testing.T) {
	got := Default(t).IdempotentRoutes()
	for _, tc := range []struct {
		route string
		want  bool
	}{
		{"POST /payment/payout", true},
		{"POST /payment/payouts/bulk", true},
		{"POST /cards/{id}/fund", true},
		{"POST /sandbox/cards/{id}/captures", true},
		{"GET /payment/payouts/bulk", false},
		{"POST /partner/wallets/preview-conversion", false},
		{"POST /cards/{id}/reveal-sessions", false},
	} {
		if slices.Contains(got, tc.route) != tc.want {
			t.Errorf("%s: among the idempotent routes %v, want %v", tc.route, !tc.want, tc.want)
		}
	}
}
