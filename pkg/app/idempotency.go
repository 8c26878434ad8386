package app

import (
	"payments/pkg/httpapi"
	"payments/pkg/idempotency"
	"payments/pkg/store"
)

// idempotentRoutes are the routes that move money, the one list of those
// that honour Idempotency-Key (docs/idempotency.md). The functions that
// serve them (payments, cards, wallets) each mount idempotent; the others
// serve none of them.
var idempotentRoutes = []string{
	// payments
	"POST /payment/payout",
	"POST /payment/collect",
	// cards
	"POST /cards",
	"POST /cards/{id}/fund",
	"POST /cards/{id}/withdraw",
	"POST /cards/{id}/terminate",
	// wallets
	"POST /partner/wallets/xaf-usd-conversion",
	"POST /wallets/deposit",
	"POST /wallets/{id}/transfer-internal",
	"POST /wallets/fund",
}

// idempotent returns the middleware that serves idempotentRoutes with
// Idempotency-Key, keeping the keys in db.
func idempotent(db *store.DB) httpapi.Middleware {
	k := &idempotency.Keys{Store: store.NewIdempotency(db), Routes: idempotentRoutes}
	return k.Wrap
}
