package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"payments/pkg/field"
	"payments/pkg/page"
	"payments/pkg/store/schema"
)

// companyRequest is a GET of target by company c.
func companyRequest(c, target string) *http.Request {
	r := httptest.NewRequest("GET", target, nil)
	return r.WithContext(WithCompany(r.Context(), c))
}

// rawCursor encodes v as a cursor would be, whatever v holds.
func rawCursor(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestParsePage(t *testing.T) {
	long := strings.Repeat("A", maxCursorLength+1)
	tests := []struct {
		query string
		want  page.Request
		field string
	}{
		{"", page.Request{Page: 1, Limit: 10}, ""},
		{"page=3", page.Request{Page: 3, Limit: 10}, ""},
		{"page=1&limit=100", page.Request{Page: 1, Limit: 100}, ""},
		{"limit=1", page.Request{Page: 1, Limit: 1}, ""},
		{"page=10000", page.Request{Page: MaxPage, Limit: 10}, ""},
		{"page=&limit=", page.Request{Page: 1, Limit: 10}, ""},
		{"page=10001", page.Request{}, "page"},
		{"page=9223372036854775807", page.Request{}, "page"},
		{"page=9223372036854775808", page.Request{}, "page"},
		{"page=-9223372036854775808", page.Request{}, "page"},
		{"page=-1", page.Request{}, "page"},
		{"page=0", page.Request{}, "page"},
		{"page=x", page.Request{}, "page"},
		{"page=1.5", page.Request{}, "page"},
		{"page=1e3", page.Request{}, "page"},
		{"page=0x10", page.Request{}, "page"},
		{"page=%201", page.Request{}, "page"},
		{"limit=0", page.Request{}, "limit"},
		{"limit=-1", page.Request{}, "limit"},
		{"limit=101", page.Request{}, "limit"},
		{"limit=1e9", page.Request{}, "limit"},
		{"limit=1000000000", page.Request{}, "limit"},
		{"limit=9223372036854775807", page.Request{}, "limit"},
		{"limit=x", page.Request{}, "limit"},
		{"cursor=garbage", page.Request{}, "cursor"},
		{"cursor=" + long, page.Request{}, "cursor"},
		{"cursor=%00%ff", page.Request{}, "cursor"},
		{"cursor=" + rawCursor("a string"), page.Request{}, "cursor"},
		{"cursor=" + rawCursor(map[string]any{"v": 1, "p": 2, "t": 5, "a": "x", "q": "y"}), page.Request{}, "cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			p, err := ParsePage(companyRequest("c1", "/list?"+tt.query), 10)
			if tt.field != "" {
				var fe *field.Error
				if !errors.As(err, &fe) || fe.Field != tt.field || !strings.HasPrefix(err.Error(), tt.field+": ") {
					t.Fatalf("err %v, want a 400 naming %s", err, tt.field)
				}
				return
			}
			if err != nil || p != tt.want {
				t.Fatalf("got %+v, %v; want %+v", p, err, tt.want)
			}
		})
	}
}

// TestParseZeroBasedPage: page=N asks for the (N+1)-th page, which the
// pagination object numbers N again; page numbers from 0 to MaxPage−1.
func TestParseZeroBasedPage(t *testing.T) {
	tests := []struct {
		query string
		want  page.Request
		field string
	}{
		{"", page.Request{Page: 1, Limit: 10, ZeroBased: true}, ""},
		{"page=0", page.Request{Page: 1, Limit: 10, ZeroBased: true}, ""},
		{"page=2&limit=5", page.Request{Page: 3, Limit: 5, ZeroBased: true}, ""},
		{"page=9999", page.Request{Page: MaxPage, Limit: 10, ZeroBased: true}, ""},
		{"page=10000", page.Request{}, "page"},
		{"page=-1", page.Request{}, "page"},
		{"page=x", page.Request{}, "page"},
		{"limit=0", page.Request{}, "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := companyRequest("c1", "/list?"+tt.query)
			p, err := ParseZeroBasedPage(r, 10)
			if tt.field != "" {
				var fe *field.Error
				if !errors.As(err, &fe) || fe.Field != tt.field {
					t.Fatalf("err %v, want a 400 naming %s", err, tt.field)
				}
				return
			}
			if err != nil || p != tt.want {
				t.Fatalf("got %+v, %v; want %+v", p, err, tt.want)
			}
			if got := Pagination(r, p, 100, "").Page; got != p.Page-1 {
				t.Errorf("pagination page %d, want %d", got, p.Page-1)
			}
			if next := p.Following("id", 100); !next.ZeroBased || next.Page != p.Page+1 {
				t.Errorf("Following = %+v", next)
			}
		})
	}
}

// TestPageRequestSkip: page N skips (N−1)×limit items from the start; the
// largest page cannot overflow, and a cursor skips nothing.
func TestPageRequestSkip(t *testing.T) {
	tests := []struct {
		p    page.Request
		want int
	}{
		{page.Request{Page: 1, Limit: 10}, 0},
		{page.Request{Page: 3, Limit: 20}, 40},
		{page.Request{Page: MaxPage, Limit: MaxLimit}, (MaxPage - 1) * MaxLimit},
		{page.Request{Page: 7, Limit: 10, After: "x", Total: 100}, 0},
	}
	for _, tt := range tests {
		if got := tt.p.Skip(); got != tt.want {
			t.Errorf("%+v.Skip() = %d, want %d", tt.p, got, tt.want)
		}
	}
	next := page.Request{Page: 2, Limit: 5}.Following("id-9", 42)
	if next != (page.Request{Page: 3, Limit: 5, After: "id-9", Total: 42}) {
		t.Errorf("Following = %+v", next)
	}
}

func TestPagination(t *testing.T) {
	tests := []struct {
		req        page.Request
		total      int
		next       string
		wantPages  int
		wantCursor bool
	}{
		{page.Request{Page: 1, Limit: 10}, 25, "id", 3, true},
		{page.Request{Page: 3, Limit: 10}, 25, "", 3, false},
		{page.Request{Page: 1, Limit: 10}, 0, "", 0, false},
		{page.Request{Page: 1, Limit: 100}, 100, "", 1, false},
		{page.Request{Page: 1, Limit: 1}, 101, "id", 101, true},
	}
	for _, tt := range tests {
		p := Pagination(companyRequest("c1", "/list"), tt.req, tt.total, tt.next)
		if p.Page != tt.req.Page || p.Limit != tt.req.Limit || p.Total != tt.total || p.TotalPages != tt.wantPages ||
			(p.NextCursor != nil) != tt.wantCursor {
			t.Errorf("Pagination(%+v, %d, %q) = %+v", tt.req, tt.total, tt.next, p)
		}
	}
	b, _ := json.Marshal(Pagination(companyRequest("c1", "/list"), page.Request{Page: 2, Limit: 10}, 15, ""))
	if string(b) != `{"page":2,"limit":10,"total":15,"totalPages":2,"next_cursor":null}` {
		t.Errorf("last page = %s", b)
	}
}

// TestCursor issues a cursor and replays it: with the same query (in any
// order, page ignored) it continues the walk; with another company, path,
// filter or limit it is a 400 naming cursor.
func TestCursor(t *testing.T) {
	const issued = "/wallet/transactions?status=SUCCESS&type=FUND&limit=5&page=3"
	r := companyRequest("c1", issued)
	req, err := ParsePage(r, 10)
	if err != nil {
		t.Fatal(err)
	}
	p := Pagination(r, req, 42, "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f60")
	if p.NextCursor == nil {
		t.Fatal("no next_cursor")
	}
	c := url.QueryEscape(*p.NextCursor)
	if strings.Contains(*p.NextCursor, "c1") || strings.ContainsAny(*p.NextCursor, "+/=") {
		t.Fatalf("cursor %q shows the company or is not base64url", *p.NextCursor)
	}
	want := page.Request{Page: 4, Limit: 5, After: "0196897a-5f0c-7d3e-9a41-1c2b3d4e5f60", Total: 42}
	tests := []struct {
		name, company, target string
		ok                    bool
	}{
		{"same query", "c1", "/wallet/transactions?status=SUCCESS&type=FUND&limit=5&cursor=" + c, true},
		{"other order, page ignored", "c1", "/wallet/transactions?cursor=" + c + "&page=1&limit=5&type=FUND&status=SUCCESS", true},
		{"an empty filter is no filter", "c1", "/wallet/transactions?status=SUCCESS&type=FUND&currency=&limit=5&cursor=" + c, true},
		{"another company", "c2", "/wallet/transactions?status=SUCCESS&type=FUND&limit=5&cursor=" + c, false},
		{"another path", "c1", "/payment/transactions?status=SUCCESS&type=FUND&limit=5&cursor=" + c, false},
		{"another filter", "c1", "/wallet/transactions?status=FAILED&type=FUND&limit=5&cursor=" + c, false},
		{"a filter dropped", "c1", "/wallet/transactions?type=FUND&limit=5&cursor=" + c, false},
		{"another limit", "c1", "/wallet/transactions?status=SUCCESS&type=FUND&limit=6&cursor=" + c, false},
		{"the default limit", "c1", "/wallet/transactions?status=SUCCESS&type=FUND&cursor=" + c, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePage(companyRequest(tt.company, tt.target), 10)
			if tt.ok {
				if err != nil || got != want {
					t.Fatalf("got %+v, %v; want %+v", got, err, want)
				}
				return
			}
			var fe *field.Error
			if !errors.As(err, &fe) || fe.Field != "cursor" {
				t.Fatalf("err %v, want a 400 naming cursor", err)
			}
		})
	}

	// A cursor edited by hand: each field out of its range is refused.
	fp := fingerprint(companyRequest("c1", "/list"), 10)
	valid := map[string]any{"v": 1, "p": 2, "t": 5, "a": "x", "q": fp}
	if _, err := ParsePage(companyRequest("c1", "/list?cursor="+rawCursor(valid)), 10); err != nil {
		t.Fatalf("hand-made valid cursor: %v", err)
	}
	for field, bad := range map[string]any{
		"v": 2, "p": 1, "t": -1, "a": "", "q": "",
	} {
		t.Run("bad "+field, func(t *testing.T) {
			c := map[string]any{}
			for k, v := range valid {
				c[k] = v
			}
			c[field] = bad
			_, err := ParsePage(companyRequest("c1", "/list?cursor="+rawCursor(c)), 10)
			if !errors.Is(err, page.ErrBadCursor) {
				t.Fatalf("err %v, want page.ErrBadCursor", err)
			}
		})
	}
	for name, v := range map[string]any{
		"huge page":  map[string]any{"v": 1, "p": uint64(1) << 63, "t": 5, "a": "x", "q": fp},
		"huge total": map[string]any{"v": 1, "p": 2, "t": uint64(1) << 63, "a": "x", "q": fp},
		"unknown":    map[string]any{"v": 1, "p": 2, "t": 5, "a": "x", "q": fp, "pk": schema.CompanyPK("c2")},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ParsePage(companyRequest("c1", "/list?cursor="+rawCursor(v)), 10); !errors.Is(err, page.ErrBadCursor) {
				t.Fatalf("err %v, want page.ErrBadCursor", err)
			}
		})
	}
}
