package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
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

// PageRequest is the part of a list that a request asks for: page Page of
// Limit items from the start of the list or, with a cursor, the page that
// follows the item at position After.
type PageRequest struct {
	Page  int
	Limit int
	// After is the position of the last item of the previous page (a
	// store's key of it, without its partition), from the cursor; "" reads
	// from the start of the list.
	After string
	// Total is the total the cursor carries: the count made when the walk
	// began. It is meaningful only with After.
	Total int
	// ZeroBased numbers the pages from 0 for the client, as GET
	// /cards/{id}/transactions does (spec §4.19): page=0 asks for Page 1,
	// and the pagination object shows Page−1. Page itself counts from 1.
	ZeroBased bool
}

// Skip returns how many matching items precede the page from where the
// read starts: (Page−1)×Limit from the start, none after a cursor.
func (p PageRequest) Skip() int {
	if p.After != "" {
		return 0
	}
	return (p.Page - 1) * p.Limit
}

// Following returns the request of the page after p, whose last item is at
// position next, in a list of total items: what the next cursor asks for.
// A walk inside the service (a test, a job) uses it instead of a cursor.
func (p PageRequest) Following(next string, total int) PageRequest {
	return PageRequest{Page: p.Page + 1, Limit: p.Limit, After: next, Total: total, ZeroBased: p.ZeroBased}
}

// PageResult is one page of a list as a store reads it.
type PageResult[T any] struct {
	Items []T
	// Total is the number of items of the whole list: counted when the
	// request had no cursor, else the cursor's Total.
	Total int
	// Next is the position of the page's last item when more items follow,
	// "" on the last page.
	Next string
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
func ParsePage(r *http.Request, defaultLimit int) (PageRequest, error) {
	return parsePage(r, defaultLimit, false)
}

// ParseZeroBasedPage is ParsePage for a list whose pages the client numbers
// from 0: page defaults to 0 and must be 0 to MaxPage−1.
func ParseZeroBasedPage(r *http.Request, defaultLimit int) (PageRequest, error) {
	return parsePage(r, defaultLimit, true)
}

func parsePage(r *http.Request, defaultLimit int, zeroBased bool) (PageRequest, error) {
	p := PageRequest{Page: 1, Limit: defaultLimit, ZeroBased: zeroBased}
	first := 1
	if zeroBased {
		first = 0
	}
	q := r.URL.Query()
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < first || n > MaxPage-1+first {
			return p, Invalid("page", fmt.Sprintf("must be an integer from %d to %d (deeper pages: follow next_cursor)", first, MaxPage-1+first))
		}
		p.Page = n + 1 - first
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxLimit {
			return p, Invalid("limit", fmt.Sprintf("must be an integer from 1 to %d", MaxLimit))
		}
		p.Limit = n
	}
	if v := q.Get("cursor"); v != "" {
		c, err := decodeCursor(v)
		if err != nil {
			return p, err
		}
		if c.Query != fingerprint(r, p.Limit) {
			return p, Invalid("cursor", "was issued for other filters or another limit: send it with the query that returned it")
		}
		p.Page, p.Total, p.After = c.Page, c.Total, c.After
	}
	return p, nil
}

// ErrBadCursor answers any cursor this service did not issue for the list
// it is sent to, with the same message whatever is wrong with it. ParsePage
// returns it, and so does a store that finds a cursor's position outside
// the list.
var ErrBadCursor error = &FieldError{Field: "cursor", Problem: "is not a cursor of this list: use the next_cursor of a previous page"}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	if len(s) > maxCursorLength {
		return c, ErrBadCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return c, ErrBadCursor
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || dec.More() {
		return c, ErrBadCursor
	}
	if c.Version != cursorVersion || c.Page < 2 || c.Page > maxCount || c.Total < 0 || c.Total > maxCount ||
		c.After == "" || c.Query == "" {
		return c, ErrBadCursor
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
	for _, part := range []string{CompanyID(r.Context()), r.URL.Path, q.Encode()} {
		io.WriteString(h, part)
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:12])
}

// Pagination returns the pagination object of the page req asked for, in a
// list of total items; next is the position of the page's last item when
// more follow ("" on the last page), from which the next cursor is made.
// Its page is numbered as the client numbers them (req.ZeroBased).
func Pagination(r *http.Request, req PageRequest, total int, next string) Page {
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
func NextCursor(r *http.Request, req PageRequest, total int, next string) *string {
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
