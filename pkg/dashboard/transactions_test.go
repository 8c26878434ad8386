package dashboard_test

import (
	"html"
	"net/http"
	"strings"
	"testing"

	"payments/pkg/identity"
)

// TestTransactionsList: the filters select by the API's rules (a bad
// value named), a To date includes its day, pages follow one another, and
// an entry of another company is the page not found.
func TestTransactionsList(t *testing.T) {
	srv, pool := server(t)
	c := client(t, srv)
	signIn(t, c, srv, pool, "viewer@example.com", identity.Viewer)
	for _, tt := range []struct {
		query      string
		status     int
		want, lack []string
	}{
		{"", 200, []string{"<h1>Transactions</h1>", "3 transactions", "ref-1", "fee"}, []string{"Export these"}},
		{"?type=FEE", 200, []string{"1 transactions", ">fee<"}, []string{"ref-1"}},
		{"?to_date=2026-02-27", 200, []string{"2 transactions", "HYPERLINK"}, []string{"ref-1"}},
		{"?status=LOST", 400, []string{"status", "must be one of"}, nil},
		{"?from_date=yesterday", 400, []string{"from_date"}, nil},
	} {
		res, body := get(t, c, srv, "/dashboard/transactions"+tt.query)
		if res.StatusCode != tt.status {
			t.Errorf("%q: %d, want %d", tt.query, res.StatusCode, tt.status)
		}
		for _, w := range tt.want {
			if !strings.Contains(body, w) {
				t.Errorf("%q lacks %q", tt.query, w)
			}
		}
		for _, l := range tt.lack {
			if strings.Contains(body, l) {
				t.Errorf("%q shows %q", tt.query, l)
			}
		}
	}
	if res, body := get(t, c, srv, "/dashboard/transactions/t2"); res.StatusCode != 200 || !strings.Contains(body, "75 XAF") {
		t.Errorf("an entry's page: %d %s", res.StatusCode, body)
	}
	if res, _ := get(t, c, srv, "/dashboard/transactions/t9"); res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown entry: %d, want 404", res.StatusCode)
	}
	if res, _ := get(t, c, srv, "/dashboard/transactions/export.csv"); res.StatusCode != http.StatusForbidden {
		t.Errorf("a viewer's export: %d, want 403", res.StatusCode)
	}
}

// TestTransactionsPages: with more entries than a page holds, the Next
// page link leads to the following ones, filters kept; a link that is not
// the list's is refused.
func TestTransactionsPages(t *testing.T) {
	srv, pool := server(t)
	c := client(t, srv)
	signIn(t, c, srv, pool, "viewer@example.com", identity.Viewer)
	_, body := get(t, c, srv, "/dashboard/transactions?limit=2")
	nav := between(body, `<nav aria-label="Pages" class="pages">`, `</nav>`)
	next := html.UnescapeString(between(nav, `<a href="`, `" rel="next">`))
	if !strings.Contains(body, "ref-1") || strings.Contains(body, ">fee<") || !strings.HasPrefix(next, "/dashboard/transactions?") {
		t.Fatalf("the first page of 2: next %q in %s", next, body)
	}
	_, body = get(t, c, srv, next)
	if !strings.Contains(body, "page 2") || strings.Contains(body, "ref-1") || !strings.Contains(body, ">fee<") || strings.Contains(body, `rel="next"`) {
		t.Errorf("the page after: %s", body)
	}
	if res, _ := get(t, c, srv, "/dashboard/transactions?cursor=forged"); res.StatusCode != http.StatusBadRequest {
		t.Errorf("a forged cursor: %d, want 400", res.StatusCode)
	}
}

// TestExportEveryRowGuarded: the export holds every entry the filters
// select, and a cell that a spreadsheet would run as a formula is text.
func TestExportEveryRowGuarded(t *testing.T) {
	srv, pool := server(t)
	c := client(t, srv)
	signIn(t, c, srv, pool, "fin@example.com", identity.Finance)
	res, body := get(t, c, srv, "/dashboard/transactions/export.csv?status=SUCCESS")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("export: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	lines := strings.Split(strings.TrimSpace(body), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "t1,") || !strings.HasPrefix(lines[2], "t3,") {
		t.Errorf("the SUCCESS export: %q", lines)
	}
	_, body = get(t, c, srv, "/dashboard/transactions/export.csv?type=WITHDRAW")
	if !strings.Contains(body, `"'=HYPERLINK(""http://evil.example"")"`) || !strings.Contains(body, ",50.00,") && !strings.Contains(body, ",5000,") {
		t.Errorf("the formula's cell is not text: %s", body)
	}
}
