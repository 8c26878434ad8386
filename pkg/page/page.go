// Package page is what a list asks a store for and what the store answers:
// a page of a list, by number or after a position. It knows no HTTP: the
// HTTP layer reads a Request from the query string and writes the
// pagination object from a Result (docs/pagination.md).
package page

import "payments/pkg/field"

// Request is the part of a list that a request asks for: page Page of
// Limit items from the start of the list or, with a cursor, the page that
// follows the item at position After.
type Request struct {
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
func (p Request) Skip() int {
	if p.After != "" {
		return 0
	}
	return (p.Page - 1) * p.Limit
}

// Following returns the request of the page after p, whose last item is at
// position next, in a list of total items: what the next cursor asks for.
// A walk inside the service (a test, a job) uses it instead of a cursor.
func (p Request) Following(next string, total int) Request {
	return Request{Page: p.Page + 1, Limit: p.Limit, After: next, Total: total, ZeroBased: p.ZeroBased}
}

// Result is one page of a list as a store reads it.
type Result[T any] struct {
	Items []T
	// Total is the number of items of the whole list: counted when the
	// request had no cursor, else the cursor's Total.
	Total int
	// Next is the position of the page's last item when more items follow,
	// "" on the last page.
	Next string
}

// ErrBadCursor is a cursor this list did not issue, or whose position a
// store cannot read.
var ErrBadCursor error = &field.Error{Field: "cursor", Problem: "is not a cursor of this list: use the next_cursor of a previous page"}
