// Package companyroutes is what stands before a company-facing function's
// routes: the token guard, the company's limits, the activity log of the
// changes its API key makes, and Idempotency-Key on the routes that move
// money. The functions that serve a company's requests share it; it links
// no domain but limits and idempotency (and the activity log, which is
// plain: no money).
package companyroutes

import (
	"fmt"
	"net/http"
	"time"

	"payments/pkg/activity"
	"payments/pkg/function"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/limits"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/store"
)

// Router returns the router of a company-facing function: its routes
// admit only requests with a valid Bearer token (guard, TokenGuard's), then
// take a token from the company's bucket for the route's class
// (Limits), and record in the company's activity log each change its API
// key makes (Recorded); errs is the function's error catalogue. Add the
// function's own middleware (Idempotent) after it.
func Router(cfg function.Config, guard httpapi.Guard, db *store.DB, errs httpapi.Catalogue) (*httpapi.Router, error) {
	limit, err := Limits(cfg, db, time.Now)
	if err != nil {
		return nil, err
	}
	log, err := activity.NewLog(store.NewActivity(db), time.Now)
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(errs, guard)
	rt.Use(limit)
	rt.Use(Recorded(log))
	return rt, nil
}

// Limits returns the middleware that keeps each company within
// cfg.CompanyLimits (limitshttp.Middleware), its buckets kept in db and
// measured by now. It fails when a limit is below 1 a second or a burst.
func Limits(cfg function.Config, db *store.DB, now func() time.Time) (httpapi.Middleware, error) {
	for _, c := range limits.Classes {
		if l := cfg.CompanyLimits.For(c); l.Rate < 1 || l.Burst < 1 {
			return nil, fmt.Errorf("%w: the %s limit must be at least 1/1, not %v", function.ErrConfig, c, l)
		}
	}
	m := &limitshttp.Middleware{Buckets: store.NewTokenBuckets(db), Limits: cfg.CompanyLimits, Classify: Class, Now: now}
	return m.Wrap, nil
}

// Class is the one rule that says what a route's declarations
// (httpapi.Money, httpapi.Reveal, where the route package registers it)
// mean for a company's request: a request that reveals a secret (a card's
// number, a reveal session) draws on the limits.Reveal bucket; one to a
// route that moves money on the limits.Money bucket, and such a route
// honours Idempotency-Key (Idempotent, docs/idempotency.md); every other
// request, read or write, draws on limits.Read.
func Class(route httpapi.Route, r *http.Request) limits.Class {
	switch {
	case route.Reveals(r):
		return limits.Reveal
	case route.MovesMoney():
		return limits.Money
	}
	return limits.Read
}

// Idempotent returns the middleware that serves the routes that move money
// (httpapi.Money) with Idempotency-Key, keeping the keys in db. The
// functions that serve them (payments, cards, wallets, card-network) each
// mount it; the others serve none of them.
func Idempotent(db *store.DB) httpapi.Middleware {
	k := &idempotencyhttp.Keys{Store: store.NewIdempotency(db)}
	return k.Wrap
}
