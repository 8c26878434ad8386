package cards_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/app/apptest"
)

// cardTxEnv is a company with two cards of one customer: the first issued
// with 25, funded with 10 and withdrawn 5; the second issued with 5 and
// terminated.
type cardTxEnv struct {
	*apptest.CardsTestEnv
	token, customer, card, card2 string
}

func newCardTxEnv(t *testing.T, idNumber string) cardTxEnv {
	t.Helper()
	e := apptest.NewCardsTestEnv(t)
	_, token, _, customer := e.CardCompany("100", idNumber)
	issue := func(amount string) string {
		r := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customer+`","amount":`+amount+`}`)
		if r.Status != 201 || r.Str("data", "status") != "ACTIVE" {
			t.Fatalf("issue: %s", r.Raw)
		}
		return r.Str("data", "id")
	}
	x := cardTxEnv{CardsTestEnv: e, token: token, customer: customer, card: issue("25")}
	for _, step := range []struct{ target, body string }{{"/fund", `{"amount":10}`}, {"/withdraw", `{"amount":5}`}} {
		if r := e.Call(e.Cards, token, "POST", "/cards/"+x.card+step.target, step.body); r.Status != 200 {
			t.Fatalf("%s: %s", step.target, r.Raw)
		}
	}
	x.card2 = issue("5")
	if r := e.Call(e.Cards, token, "POST", "/cards/"+x.card2+"/terminate", ""); r.Status != 200 {
		t.Fatalf("terminate: %s", r.Raw)
	}
	return x
}

// get is a GET of target by the company.
func (x cardTxEnv) get(target string) apptest.Result {
	x.T.Helper()
	return x.Call(x.Cards, x.token, "GET", target, "")
}

// itemStr returns the value at path of item i of r's data, as text.
func itemStr(r apptest.Result, i int, path ...string) string {
	items := r.Items()
	if i >= len(items) {
		return "<none>"
	}
	return apptest.Result{Body: items[i].(map[string]any)}.Str(path...)
}

// itemStrs returns the value at path of every item of r's data.
func itemStrs(r apptest.Result, path ...string) []string {
	var out []string
	for i := range r.Items() {
		out = append(out, itemStr(r, i, path...))
	}
	return out
}

// TestCardTransactionLists: a card's transactions (pages from 0, default
// limit 50) and a customer's across their cards (pages from 1, default
// limit 20), newest first, in the shape of §2.8 with ours, filtered, and
// one transaction.
func TestCardTransactionLists(t *testing.T) {
	t.Parallel()
	x := newCardTxEnv(t, "CM-8101")

	r := x.get("/cards/" + x.card + "/transactions")
	if r.Status != 200 || r.Str("meta") != r.Str("pagination") || r.Str("meta", "page") != "0" ||
		r.Str("meta", "limit") != "50" || r.Str("meta", "total") != "3" || r.Str("meta", "next_cursor") != "<nil>" {
		t.Fatalf("card list: %d %s", r.Status, r.Raw)
	}
	if got := itemStrs(r, "type"); !slices.Equal(got, []string{"WITHDRAWAL", "FUNDING", "FUNDING"}) {
		t.Errorf("types %v", got)
	}
	if got := itemStrs(r, "amount"); !slices.Equal(got, []string{"5", "10", "25"}) {
		t.Errorf("amounts %v", got)
	}
	w := r.Items()[0].(map[string]any)
	wantKeys := "amount,card,category,completed_at,created_at,currency,customer,decline_reason,description,fee_amount," +
		"hold_amount,id,merchant,original_transaction_id,status,type"
	if got := apptest.KeysOf(w); got != wantKeys {
		t.Errorf("keys %s, want %s", got, wantKeys)
	}
	for path, want := range map[string]string{
		"category": "CARD", "status": "SUCCESS", "currency": "USD", "description": "Card withdrawal",
		"fee_amount": "0", "merchant": "<nil>", "decline_reason": "<nil>", "hold_amount": "<nil>",
		"original_transaction_id": "<nil>", "card.id": x.card, "card.brand": "VISA",
		"customer.id": x.customer, "customer.first_name": "Amina", "customer.last_name": "Njoya",
	} {
		if got := itemStr(r, 0, strings.Split(path, ".")...); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
	if !strings.HasPrefix(itemStr(r, 0, "card", "masked_pan"), "**** **** **** ") || itemStr(r, 0, "completed_at") == "<nil>" {
		t.Errorf("withdrawal %v", w)
	}
	withdrawal, funding, issuance := itemStr(r, 0, "id"), itemStr(r, 1, "id"), itemStr(r, 2, "id")

	raw := x.get("/cards/" + x.card + "/transactions?includeRaw=true")
	if apptest.KeysOf(raw.Items()[0].(map[string]any)["raw"].(map[string]any)) != "issuer_transaction_id,kind,refunded_amount,settled_amount" ||
		itemStr(raw, 0, "raw", "issuer_transaction_id") != "<nil>" || itemStr(raw, 0, "raw", "settled_amount") != "<nil>" {
		t.Errorf("includeRaw: %s", raw.Raw)
	}

	c := x.get("/customers/" + x.customer + "/transactions")
	if c.Status != 200 || c.Str("meta", "page") != "1" || c.Str("meta", "limit") != "20" || c.Str("meta", "total") != "5" {
		t.Fatalf("customer list: %d %s", c.Status, c.Raw)
	}
	if got := itemStrs(c, "type"); !slices.Equal(got, []string{"TERMINATION", "FUNDING", "WITHDRAWAL", "FUNDING", "FUNDING"}) {
		t.Errorf("customer types %v", got)
	}
	if got := itemStrs(c, "card", "id"); !slices.Equal(got, []string{x.card2, x.card2, x.card, x.card, x.card}) {
		t.Errorf("customer cards %v", got)
	}

	card2Funding := itemStr(c, 1, "id")
	at := url.QueryEscape(itemStr(r, 1, "created_at"))
	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)
	filters := []struct {
		target string
		want   []string
	}{
		{"/cards/" + x.card + "/transactions?type=withdrawal", []string{withdrawal}},
		{"/cards/" + x.card + "/transactions?status=success&type=FUNDING", []string{funding, issuance}},
		{"/cards/" + x.card + "/transactions?status=PENDING", nil},
		{"/cards/" + x.card + "/transactions?fromDate=" + at, []string{withdrawal, funding}},
		{"/cards/" + x.card + "/transactions?toDate=" + at, []string{issuance}},
		{"/cards/" + x.card + "/transactions?fromDate=" + tomorrow, nil},
		{"/cards/" + x.card + "/transactions?toDate=" + tomorrow + "&sync=false", []string{withdrawal, funding, issuance}},
		{"/customers/" + x.customer + "/transactions?type=WITHDRAWAL&toDate=" + at, nil},
		{"/customers/" + x.customer + "/transactions?fromDate=" + at + "&type=funding", []string{card2Funding, funding}},
	}
	for _, f := range filters {
		r := x.get(f.target)
		if got := itemStrs(r, "id"); r.Status != 200 || !slices.Equal(got, f.want) || r.Str("meta", "total") != fmt.Sprint(len(f.want)) {
			t.Errorf("%s: %v (%d %s), want %v", f.target, got, r.Status, r.Str("meta"), f.want)
		}
	}

	one := x.get("/cards/" + x.card + "/transactions/" + withdrawal + "?includeRaw=true")
	if one.Status != 200 || one.Str("data", "id") != withdrawal || one.Str("data", "type") != "WITHDRAWAL" ||
		one.Str("data", "customer", "last_name") != "Njoya" || one.Str("data", "raw", "kind") != "<nil>" {
		t.Errorf("one transaction: %d %s", one.Status, one.Raw)
	}
	if one := x.get("/cards/" + x.card + "/transactions/" + withdrawal); one.Str("data", "raw") != "<nil>" {
		t.Errorf("raw without includeRaw: %s", one.Raw)
	}
}

// TestCardTransactionPaging: a card's pages are numbered from 0, a
// customer's from 1, in the request, the pagination object and the walk by
// cursor.
func TestCardTransactionPaging(t *testing.T) {
	t.Parallel()
	x := newCardTxEnv(t, "CM-8201")
	all := itemStrs(x.get("/customers/"+x.customer+"/transactions"), "id")
	cardAll := itemStrs(x.get("/cards/"+x.card+"/transactions"), "id")
	if len(all) != 5 || len(cardAll) != 3 {
		t.Fatalf("lists %v, %v", all, cardAll)
	}
	tests := []struct {
		target string
		page   string
		want   []string
	}{
		{"/cards/" + x.card + "/transactions?limit=2", "0", cardAll[:2]},
		{"/cards/" + x.card + "/transactions?page=0&limit=2", "0", cardAll[:2]},
		{"/cards/" + x.card + "/transactions?page=1&limit=2", "1", cardAll[2:]},
		{"/cards/" + x.card + "/transactions?page=2&limit=2", "2", nil},
		{"/customers/" + x.customer + "/transactions?limit=2", "1", all[:2]},
		{"/customers/" + x.customer + "/transactions?page=2&limit=2", "2", all[2:4]},
		{"/customers/" + x.customer + "/transactions?page=3&limit=2", "3", all[4:]},
	}
	for _, tt := range tests {
		r := x.get(tt.target)
		if got := itemStrs(r, "id"); r.Status != 200 || !slices.Equal(got, tt.want) || r.Str("meta", "page") != tt.page {
			t.Errorf("%s: %v, page %s (%d %s); want %v, page %s", tt.target, got, r.Str("meta", "page"), r.Status, r.Raw, tt.want, tt.page)
		}
	}

	walks := []struct {
		base  string
		first int
		want  []string
	}{
		{"/cards/" + x.card + "/transactions?limit=2", 0, cardAll},
		{"/customers/" + x.customer + "/transactions?limit=2", 1, all},
	}
	for _, w := range walks {
		var got []string
		target := w.base
		for page := w.first; ; page++ {
			r := x.get(target)
			if r.Status != 200 || r.Str("meta", "page") != fmt.Sprint(page) || r.Str("meta", "total") != fmt.Sprint(len(w.want)) {
				t.Fatalf("%s: %d %s", target, r.Status, r.Raw)
			}
			got = append(got, itemStrs(r, "id")...)
			next := r.Str("meta", "next_cursor")
			if next == "<nil>" {
				break
			}
			target = w.base + "&cursor=" + url.QueryEscape(next)
		}
		if !slices.Equal(got, w.want) {
			t.Errorf("walk %s: %v, want %v", w.base, got, w.want)
		}
	}
	cursor := url.QueryEscape(x.get("/cards/"+x.card+"/transactions?limit=1").Str("meta", "next_cursor"))
	if r := x.get("/cards/" + x.card2 + "/transactions?limit=1&cursor=" + cursor); r.Status != 400 || r.Str("field") != "cursor" {
		t.Errorf("a cursor of another card: %d %s", r.Status, r.Raw)
	}
}

// TestCardTransactionRefusals: each bad parameter is a 400 naming it; a
// card, transaction or customer that is not the company's is a 404.
func TestCardTransactionRefusals(t *testing.T) {
	t.Parallel()
	x := newCardTxEnv(t, "CM-8301")
	bad := []struct{ query, field string }{
		{"page=-1", "page"},
		{"page=x", "page"},
		{"page=1.5", "page"},
		{"limit=0", "limit"},
		{"limit=101", "limit"},
		{"limit=ten", "limit"},
		{"cursor=garbage", "cursor"},
		{"fromDate=2026-13-01", "fromDate"},
		{"fromDate=yesterday", "fromDate"},
		{"toDate=2026-11-23T25:00:00Z", "toDate"},
		{"fromDate=2026-11-23&toDate=2026-11-22", "toDate"},
		{"type=PURCHASE", "type"},
		{"status=DONE", "status"},
		{"status=ACTIVE", "status"},
		{"includeRaw=yes", "includeRaw"},
		{"sync=1", "sync"},
	}
	lists := []string{"/cards/" + x.card + "/transactions", "/customers/" + x.customer + "/transactions"}
	for _, list := range lists {
		cases := bad
		if strings.HasPrefix(list, "/customers/") {
			cases = append(slices.Clone(bad), struct{ query, field string }{"page=0", "page"})
		}
		for _, tt := range cases {
			r := x.get(list + "?" + tt.query)
			if r.Status != 400 || r.Str("code") != "INVALID_FIELD" || r.Str("field") != tt.field || !strings.HasPrefix(r.Str("message"), tt.field+": ") {
				t.Errorf("%s?%s: %d %s, want a 400 naming %s", list, tt.query, r.Status, r.Raw, tt.field)
			}
			if (tt.field == "type" || tt.field == "status") && !strings.Contains(r.Str("message"), "invalid status, brand, type or date value") {
				t.Errorf("%s?%s: message %q", list, tt.query, r.Str("message"))
			}
		}
	}
	tx := itemStr(x.get("/cards/"+x.card+"/transactions"), 0, "id")
	if r := x.get("/cards/" + x.card + "/transactions/" + tx + "?sync=maybe"); r.Status != 400 || r.Str("field") != "sync" {
		t.Errorf("sync=maybe: %d %s", r.Status, r.Raw)
	}

	otherTx := itemStr(x.get("/cards/"+x.card2+"/transactions"), 0, "id")
	_, other := x.ApprovedCompany()
	notFound := []struct {
		token, target, code string
	}{
		{other, "/cards/" + x.card + "/transactions", "CARD_NOT_FOUND"},
		{other, "/cards/" + x.card + "/transactions/" + tx, "CARD_NOT_FOUND"},
		{other, "/customers/" + x.customer + "/transactions", "CUSTOMER_NOT_FOUND"},
		{x.token, "/cards/" + uuid.NewString() + "/transactions", "CARD_NOT_FOUND"},
		{x.token, "/cards/not-a-card/transactions", "CARD_NOT_FOUND"},
		{x.token, "/cards/" + x.card + "/transactions/" + otherTx, "TRANSACTION_NOT_FOUND"},
		{x.token, "/cards/" + x.card + "/transactions/" + uuid.NewString(), "TRANSACTION_NOT_FOUND"},
		{x.token, "/cards/" + x.card + "/transactions/not-a-transaction", "TRANSACTION_NOT_FOUND"},
		{x.token, "/customers/" + uuid.NewString() + "/transactions", "CUSTOMER_NOT_FOUND"},
		{x.token, "/customers/not-a-customer/transactions", "CUSTOMER_NOT_FOUND"},
	}
	for _, nf := range notFound {
		if r := x.Call(x.Cards, nf.token, "GET", nf.target, ""); r.Status != 404 || r.Str("code") != nf.code {
			t.Errorf("%s: %d %s, want 404 %s", nf.target, r.Status, r.Raw, nf.code)
		}
	}

	// A customer of the company without cards has no transactions.
	r := x.Enroll(x.token, x.Identity("cm-8302@example.com", "CM-8302"))
	if r.Status != 201 {
		t.Fatalf("enrol: %s", r.Raw)
	}
	if r := x.get("/customers/" + r.Str("data", "id") + "/transactions"); r.Status != 200 || len(r.Items()) != 0 || r.Str("meta", "total") != "0" {
		t.Errorf("a customer without cards: %d %s", r.Status, r.Raw)
	}
}
