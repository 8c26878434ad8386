package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"payments/pkg/field"
	"payments/pkg/page"
)

// Pagination (spec §2.9 and §8; docs/pagination.md). Pages are 1-indexed,
// but for the one list the spec numbers from 0 (ParseZeroBasedPage).
// A list request asks for ?page=N&limit=L, or for ?cursor=C: the page after
// the one whose pagination object gave C as next_cursor. Either way the
// answer carries page, limit, total, totalPages and next_cursor (null on the
// last page).

// MaxLimit is the largest page size a list accepts; larger is a 400.
const MaxLimit = 100

// MaxPage is the largest page number a list accepts in ?page; larger is a
// 400. It keeps (page−1)×limit far from overflowing and bounds what a
// page=N request skips to (MaxPage−1)×MaxLimit entries; deeper pages are
// reached with next_cursor, which costs the same at any depth.
const MaxPage = 10000

// maxCount bounds the total and the page number a cursor may carry, so that
// no arithmetic on them can overflow.
const maxCount = 1 << 40

// maxCursorLength bounds the text of a cursor; the cursors we issue are
// about 150 characters.
const maxCursorLength = 512

// cursorVersion is the layout of the cursors issued now.
const cursorVersion = 1

// Page is the pagination object of §2.9, plus next_cursor: the opaque token
// that asks for the next page, null on the last one.
type Page struct {
	Page       int     `json:"page"`
	Limit      int     `json:"limit"`
	Total      int     `json:"total"`
	TotalPages int     `json:"totalPages"`
	NextCursor *string `json:"next_cursor"`
}

// cursor is what next_cursor carries: positions in the caller's own list,
// never a partition key (a store rebuilds the partition from the caller's
// company), and a fingerprint of the request that issued it.
type cursor struct {
	Version int    `json:"v"`
	Page    int    `json:"p"` // the page it asks for
	Total   int    `json:"t"` // the total counted on the first page
	After   string `json:"a"` // the position of the previous page's last item
	Query   string `json:"q"` // fingerprint of the route, company, filters and limit
}

// ParsePage reads the page, limit and cursor query parameters. page
// defaults to 1 and must be 1 to MaxPage; limit defaults to defaultLimit
// and must be 1 to MaxLimit; a cursor must be one that this list issued to
// this company for the same filters and limit (it then decides the page, and
// page is ignored). Each bad value is a 400 naming its parameter.
func ParsePage(r *http.Request, defaultLimit int) (page.Request, error) {
	return parsePage(r, defaultLimit, false)
}

// ParseCursorPage is ParsePage for a list read by its cursor alone, as the
// operator console's are: a page number past 1 without a cursor is a 400
// naming page. It returns the list's total: counted with count on the
// first page, carried by the cursor on the others.
func ParseCursorPage(r *http.Request, defaultLimit int, count func(context.Context) (int, error)) (page.Request, int, error) {
	req, err := ParsePage(r, defaultLimit)
	if err != nil {
		return page.Request{}, 0, err
	}
	if req.Page > 1 && req.After == "" {
		return page.Request{}, 0, field.Invalid("page", "this list has no page numbers: follow next_cursor")
	}
	if req.After != "" {
		return req, req.Total, nil
	}
	total, err := count(r.Context())
	return req, total, err
}

// ParseZeroBasedPage is ParsePage for a list whose pages the client numbers
// from 0: page defaults to 0 and must be 0 to MaxPage−1.
func ParseZeroBasedPage(r *http.Request, defaultLimit int) (page.Request, error) {
	return parsePage(r, defaultLimit, true)
}

func parsePage(r *http.Request, defaultLimit int, zeroBased bool) (page.Request, error) {
	p := page.Request{Page: 1, Limit: defaultLimit, ZeroBased: zeroBased}
	first := 1
	if zeroBased {
		first = 0
	}
	q := r.URL.Query()
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < first || n > MaxPage-1+first {
			return p, field.Invalid("page", fmt.Sprintf("must be an integer from %d to %d (deeper pages: follow next_cursor)", first, MaxPage-1+first))
		}
		p.Page = n + 1 - first
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxLimit {
			return p, field.Invalid("limit", fmt.Sprintf("must be an integer from 1 to %d", MaxLimit))
		}
		p.Limit = n
	}
	if v := q.Get("cursor"); v != "" {
		c, err := decodeCursor(v)
		if err != nil {
			return p, err
		}
		if c.Query != fingerprint(r, p.Limit) {
			return p, field.Invalid("cursor", "was issued for other filters or another limit: send it with the query that returned it")
		}
		p.Page, p.Total, p.After = c.Page, c.Total, c.After
	}
	return p, nil
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	if len(s) > maxCursorLength {
		return c, page.ErrBadCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return c, page.ErrBadCursor
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || dec.More() {
		return c, page.ErrBadCursor
	}
	if c.Version != cursorVersion || c.Page < 2 || c.Page > maxCount || c.Total < 0 || c.Total > maxCount ||
		c.After == "" || c.Query == "" {
		return c, page.ErrBadCursor
	}
	return c, nil
}

// fingerprint identifies what a cursor may be replayed with: the caller's
// company, the path (which names a wallet, say), the limit and every other
// query parameter but page and cursor. It is a hash, so the cursor does not
// reveal them.
func fingerprint(r *http.Request, limit int) string {
	q := r.URL.Query()
	q.Del("page")
	q.Del("cursor")
	for k, vs := range q {
		if len(vs) == 1 && vs[0] == "" {
			q.Del(k) // ?status= is no filter
		}
	}
	q.Set("limit", strconv.Itoa(limit))
	h := sha256.New()
	for _, part := range []string{companyID(r.Context()), r.URL.Path, q.Encode()} {
		io.WriteString(h, part)
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// Pagination returns the pagination object of the page req asked for, in a
// list of total items; next is the position of the page's last item when
// more follow ("" on the last page), from which the next cursor is made.
// Its page is numbered as the client numbers them (req.ZeroBased).
func Pagination(r *http.Request, req page.Request, total int, next string) Page {
	page := req.Page
	if req.ZeroBased {
		page--
	}
	return Page{
		Page: page, Limit: req.Limit, Total: total, TotalPages: (total + req.Limit - 1) / req.Limit,
		NextCursor: NextCursor(r, req, total, next),
	}
}

// NextCursor returns the cursor of the page after the one req asked for,
// whose last item is at position next, in a list of total items; nil when
// next is "" (the last page).
func NextCursor(r *http.Request, req page.Request, total int, next string) *string {
	if next == "" {
		return nil
	}
	b, err := json.Marshal(cursor{
		Version: cursorVersion, Page: req.Page + 1, Total: total, After: next, Query: fingerprint(r, req.Limit),
	})
	if err != nil { // a struct of ints and strings always encodes
		return nil
	}
	s := base64.RawURLEncoding.EncodeToString(b)
	return &s
}
