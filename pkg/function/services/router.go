package services

// What stands before a company-facing function's routes: the token guard,
// the company's limits, and Idempotency-Key on the routes that move money.

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/function"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/limits"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/store"
)

// CompanyRouter returns the router of a company-facing function: its routes
// admit only requests with a valid Bearer token (guard, TokenGuard's), then
// take a token from the company's bucket for the route's class
// (CompanyLimits); errs is the function's error catalogue. Add the function's own middleware (Idempotent) after it.
func CompanyRouter(cfg function.Config, guard httpapi.Guard, db *store.DB, errs httpapi.Catalogue) (*httpapi.Router, error) {
	limit, err := CompanyLimits(cfg, db, time.Now)
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(errs, guard)
	rt.Use(limit)
	return rt, nil
}

// CompanyLimits returns the middleware that keeps each company within
// cfg.CompanyLimits (limitshttp.Middleware), its buckets kept in db and
// measured by now. It fails when a limit is below 1 a second or a burst.
func CompanyLimits(cfg function.Config, db *store.DB, now func() time.Time) (httpapi.Middleware, error) {
	for _, c := range limits.Classes {
		if l := cfg.CompanyLimits.For(c); l.Rate < 1 || l.Burst < 1 {
			return nil, fmt.Errorf("%w: the %s limit must be at least 1/1, not %v", function.ErrConfig, c, l)
		}
	}
	m := &limitshttp.Middleware{Buckets: store.NewTokenBuckets(db), Limits: cfg.CompanyLimits, Classify: RouteClass, Now: now}
	return m.Wrap, nil
}

// RouteClass is the one rule that says which bucket a company's request
// draws on: a card's reveal (cardshttp.RevealRoute with ?reveal=true, and
// cardshttp.RevealSessionRoute) is limits.Reveal, the routes that move money (IdempotentRoutes) are
// limits.Money, and every other route, read or write, is limits.Read.
// pattern is the route's, as the router registered it.
func RouteClass(pattern string, r *http.Request) limits.Class {
	if pattern == cardshttp.RevealSessionRoute {
		return limits.Reveal
	}
	if pattern == cardshttp.RevealRoute {
		// A malformed reveal is refused by the route: it reveals nothing.
		if reveal, err := httpapi.ParseBool(r, cardshttp.RevealParam, false); err == nil && reveal {
			return limits.Reveal
		}
	}
	if slices.Contains(IdempotentRoutes, pattern) {
		return limits.Money
	}
	return limits.Read
}

// IdempotentRoutes are the routes that move money, the one list of those
// that honour Idempotency-Key (docs/idempotency.md). The functions that
// serve them (payments, cards, wallets, card-network) each mount
// Idempotent; the others serve none of them.
var IdempotentRoutes = []string{
	// payments
	"POST /payment/payout",
	"POST /payment/collect",
	// cards
	"POST /cards",
	"POST /cards/{id}/fund",
	"POST /cards/{id}/withdraw",
	"POST /cards/{id}/terminate",
	"POST /cards/transactions/{id}/disputes",
	"POST /payment/payouts/bulk",
	// wallets
	"POST /partner/wallets/xaf-usd-conversion",
	"POST /wallets/deposit",
	"POST /wallets/{id}/transfer-internal",
	"POST /wallets/fund",
	// card-network (sandbox mode)
	"POST /sandbox/cards/{id}/authorizations",
	"POST /sandbox/card-transactions/{transactionId}/settle",
	"POST /sandbox/card-transactions/{transactionId}/reverse",
	"POST /sandbox/card-transactions/{transactionId}/refund",
	"POST /sandbox/card-transactions/{transactionId}/expire",
	"POST /sandbox/cards/{id}/captures",
	"POST /sandbox/cards/{id}/refunds",
	"POST /sandbox/cards/{id}/terminate",
}

// Idempotent returns the middleware that serves IdempotentRoutes with
// Idempotency-Key, keeping the keys in db.
func Idempotent(db *store.DB) httpapi.Middleware {
	k := &idempotencyhttp.Keys{Store: store.NewIdempotency(db), Routes: IdempotentRoutes,
		BodyLimits: map[string]int64{"POST /payment/payouts/bulk": bulkhttp.MaxBodyBytes}}
	return k.Wrap
}
