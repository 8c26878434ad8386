// Package issuerauthorizations is the issuer-authorizations function: POST
// /issuer/authorizations, which the card network calls, through the
// issuer, for a decision on each card payment.
package issuerauthorizations

import (
	"context"
	"time"

	"payments/pkg/auth/authhttp"
	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/customers/customershttp"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/issuerreceivers"
	"payments/pkg/function/services"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/issuerhooks/issuerhookshttp"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/reconcile/reconcilehttp"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue: the answers to the errors of
// what it links (function.Catalogue).
var Errors = function.Catalogue(issuerhookshttp.Errors, cardshttp.Errors, authhttp.Errors, bulkhttp.Errors, companieshttp.Errors, customershttp.Errors, debtshttp.Errors, webhookshttp.Errors, feeshttp.Errors, fxhttp.Errors, idempotencyhttp.Errors, limitshttp.Errors, paymentshttp.Errors, operatorhookshttp.Errors, reconcilehttp.Errors, walletshttp.Errors)

// New builds the issuer-authorizations function: POST
// /issuer/authorizations, without the token guard. A request signed with
// the issuer's secret is decided in the request (cards.Service.Decide):
// one read of the card, one conditional write, its events in the outbox.
// It publishes nothing and tells the issuer nothing: the network's advice
// of the outcome, applied by the card-worker, does both. In production mode
// it serves no route (404 ROUTE_NOT_FOUND): Stripe's authorization requests
// reach the stripe-webhooks function, and this format is the sandbox's.
//
// Its fee schedule cache is its own (base.NewCaches): it lives as long
// as the Lambda instance.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	return NewWith(ctx, cfg, base.NewCaches(time.Now))
}

// NewWith is New over caches, which pkg/app shares with the other
// functions of its process.
func NewWith(ctx context.Context, cfg function.Config, caches base.Caches) (function.HTTPHandler, error) {
	if cfg.Mode == function.ModeProduction {
		return function.HTTP(httpapi.NewRouter(Errors, nil)), nil
	}
	db := base.DB(cfg)
	d, err := services.CardDecider(db, caches.Fees)
	if err != nil {
		return nil, err
	}
	a, err := issuerreceivers.Authorizations(cfg, d)
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(Errors, nil)
	issuerhookshttp.AuthorizationRoutes(rt, a)
	return function.HTTP(rt), nil
}
