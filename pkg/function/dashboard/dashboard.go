// Package dashboard is the dashboard function: the company dashboard's
// pages under /dashboard (pkg/dashboard), over the user pool, the
// sessions' records in the table and the services the API uses: the
// wallets' balances (services.Balances), the customers' directory
// (services.CustomerDirectory) and the cards' manager
// (services.CardManager, built without the card vault).
package dashboard

import (
	"context"
	"net/http"
	"time"

	"payments/pkg/activity"
	"payments/pkg/auth/authhttp"
	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/customers/customershttp"
	"payments/pkg/dashboard"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/services"
	"payments/pkg/function/userpool"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/identity"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/providers"
	"payments/pkg/reconcile/reconcilehttp"
	"payments/pkg/sessions"
	"payments/pkg/store"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue, function.Catalogue of the
// catalogues of the domains it links, as the API's functions declare
// theirs. The pages show their own sentences, never a catalogue's;
// function.HTTP answers with it an event it cannot read.
var Errors = function.Catalogue(walletshttp.Errors, fxhttp.Errors, feeshttp.Errors, debtshttp.Errors, paymentshttp.Errors, companieshttp.Errors, authhttp.Errors, limitshttp.Errors, idempotencyhttp.Errors, bulkhttp.Errors, cardshttp.Errors, customershttp.Errors, webhookshttp.Errors, operatorhookshttp.Errors, reconcilehttp.Errors)

// New builds the dashboard function over the user pool of cfg
// (USER_POOL_ID, USER_POOL_CLIENT_ID: Amazon Cognito, cognito-local under
// make run).
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	pool, err := userpool.New(cfg)
	if err != nil {
		return nil, err
	}
	h, err := Handler(ctx, cfg, pool, time.Now)
	if err != nil {
		return nil, err
	}
	return function.HTTP(h), nil
}

// Handler is the dashboard over pool and the function's table, its
// sessions sealed with cfg.DashboardSessionKey, telling the time by now.
// The browser tests serve it over a test double of the pool.
func Handler(_ context.Context, cfg function.Config, pool identity.Pool, now func() time.Time) (http.Handler, error) {
	db := base.DB(cfg)
	sm, err := sessions.NewManager(store.NewSessions(db), []byte(cfg.DashboardSessionKey), now)
	if err != nil {
		return nil, err
	}
	balances, err := services.Balances(db)
	if err != nil {
		return nil, err
	}
	log, err := activity.NewLog(store.NewActivity(db), now)
	if err != nil {
		return nil, err
	}
	directory, err := services.CustomerDirectory(db)
	if err != nil {
		return nil, err
	}
	// The card issuer of the mode, without a sealer (the dashboard issues
	// no card) nor Stripe's adapter (pkg/function/cardissuer, which the
	// dashboard does not link): in production mode freezing is refused
	// (cards.ErrNoIssuer) and the cards are read.
	p, err := services.Providers(cfg, db, providers.Deps{})
	if err != nil {
		return nil, err
	}
	manager, err := services.CardManager(db, p)
	if err != nil {
		return nil, err
	}
	return dashboard.New(dashboard.Deps{Pool: pool, Sessions: sm, Wallets: balances, Activity: log,
		Customers: directory, Cards: manager, Now: now})
}
