// Package limits keeps each company's request rate within its limits: a
// token bucket per company and route class (Read, Money, Reveal), shared by
// every Lambda instance through the table (store.TokenBuckets). The
// middleware of every company-facing function (Middleware, mounted by
// companyroutes.Router after the token guard) takes one token of the
// request's class from the company's bucket: a request that finds it empty
// is 429 RATE_LIMITED with Retry-After, and every answer to a company token
// says the class's RateLimit-Limit and RateLimit-Remaining
// (docs/operations.md, "Limits per company").
package limits

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Class is a route class: the routes whose requests draw on one bucket.
type Class string

// The route classes: companyroutes.Class says which requests are which, from
// what each route declares where it is registered (httpapi.Money,
// httpapi.Reveal).
const (
	// Read is every route that moves no money: reads, and the writes that
	// create or change no more than a record (a customer, a webhook
	// endpoint, a card's freeze).
	Read Class = "read"
	// Money is the routes that move or reserve money: payouts,
	// collections, transfers, conversions, a card's issue, funding,
	// withdrawal and termination, bulk payouts, the sandbox network's
	// card transactions.
	Money Class = "money"
	// Reveal is a card's reveal (GET /cards/{id}?reveal=true, POST
	// /cards/{id}/reveal-sessions), which the hourly reveal quota limits
	// besides.
	Reveal Class = "reveal"
)

// Classes are every class, in the order the documentation lists them.
var Classes = []Class{Read, Money, Reveal}

// Limit is one class's bucket: it holds at most Burst tokens and gains
// Rate tokens a second; each request takes one.
type Limit struct {
	Rate  int // tokens a second
	Burst int // the bucket's capacity: requests admitted at once after a pause
}

// String returns l as its setting spells it: "rate/burst".
func (l Limit) String() string { return fmt.Sprintf("%d/%d", l.Rate, l.Burst) }

// ParseLimit reads a setting "rate/burst" ("50/100": 50 a second, bursts
// of 100), both whole numbers of at least 1.
func ParseLimit(s string) (Limit, error) {
	rate, burst, ok := strings.Cut(s, "/")
	r, err1 := strconv.Atoi(rate)
	b, err2 := strconv.Atoi(burst)
	if !ok || err1 != nil || err2 != nil || r < 1 || b < 1 {
		return Limit{}, fmt.Errorf("limits: %q is not rate/burst, two whole numbers of at least 1", s)
	}
	return Limit{Rate: r, Burst: b}, nil
}

// Limits are the limits of every class.
type Limits struct {
	Read, Money, Reveal Limit
}

// Defaults are the limits a stage has unless its parameters say otherwise
// (README, "Configuration").
var Defaults = Limits{
	Read:   Limit{Rate: 50, Burst: 100},
	Money:  Limit{Rate: 10, Burst: 20},
	Reveal: Limit{Rate: 1, Burst: 5},
}

// For returns the limit of class c; an unknown class has Read's.
func (l Limits) For(c Class) Limit {
	switch c {
	case Money:
		return l.Money
	case Reveal:
		return l.Reveal
	}
	return l.Read
}

// Decision is a bucket's answer to one request.
type Decision struct {
	Allowed bool
	// Remaining is the whole tokens left in the bucket after the request.
	Remaining int
	// RetryAfter is, for a request refused, the time until a token is
	// there.
	RetryAfter time.Duration
}

// Bucket takes tokens from the buckets of companies: store.TokenBuckets.
type Bucket interface {
	// Take takes one token from the bucket of companyID's class c, whose
	// limit is l, at now, or refuses the request with the time until a
	// token is there. An error is a bucket that could not be read or
	// written.
	Take(ctx context.Context, companyID string, c Class, l Limit, now time.Time) (Decision, error)
}

// ErrRateLimited is a request refused because its company's bucket for the
// route's class is empty: 429 RATE_LIMITED. The error returned is an
// *Error.
var ErrRateLimited = errors.New("limits: rate limited")

// Error is a request refused by its company's bucket, with the wait until
// the next token.
type Error struct {
	Class      Class
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return fmt.Sprintf("%v: %s requests: retry after %v", ErrRateLimited, e.Class, e.RetryAfter)
}

// Unwrap returns ErrRateLimited.
func (e *Error) Unwrap() error { return ErrRateLimited }

// RetryAfterSeconds returns the wait in whole seconds, rounded up, at least
// 1: the answer's Retry-After.
func (e *Error) RetryAfterSeconds() int {
	return max(1, int((e.RetryAfter+time.Second-1)/time.Second))
}
