// Package dashboard is the dashboard function: the company dashboard's
// pages under /dashboard (pkg/dashboard), over the user pool, the
// sessions' records in the table and the services the API uses: the
// wallets' (services.Balances), the payments and bulk payouts (the
// payments function's), the companies' keys (the console's
// companies.Service), the webhooks' endpoints and delivery log (the
// webhooks function's), the customers' directory
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
	"payments/pkg/companies"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/customers/customershttp"
	"payments/pkg/dashboard"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/cardissuer"
	"payments/pkg/function/keyvaults"
	"payments/pkg/function/services"
	"payments/pkg/function/userpool"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/identity"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/outbound"
	"payments/pkg/payments"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/providers"
	"payments/pkg/queue"
	"payments/pkg/reconcile/reconcilehttp"
	"payments/pkg/sessions"
	"payments/pkg/store"
	"payments/pkg/vault/kmskeys"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue, function.Catalogue of the
// catalogues of the domains it links, as the API's functions declare
// theirs. The pages show their own sentences, never a catalogue's;
// function.HTTP answers with it an event it cannot read.
var Errors = function.Catalogue(walletshttp.Errors, fxhttp.Errors, feeshttp.Errors, debtshttp.Errors, paymentshttp.Errors, companieshttp.Errors, authhttp.Errors, limitshttp.Errors, idempotencyhttp.Errors, bulkhttp.Errors, cardshttp.Errors, customershttp.Errors, webhookshttp.Errors, operatorhookshttp.Errors, reconcilehttp.Errors)

// New builds the dashboard function over the user pool of cfg
// (USER_POOL_ID, USER_POOL_CLIENT_ID: Amazon Cognito, cognito-local under
// make run). Its caches are its own (base.NewCaches).
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	return NewWith(ctx, cfg, base.NewCaches(time.Now))
}

// NewWith is New over caches, which pkg/app shares with the other
// functions of its process: a key rolled in the dashboard is forgotten
// from their company cache, as the console's rotation is.
func NewWith(ctx context.Context, cfg function.Config, caches base.Caches) (function.HTTPHandler, error) {
	pool, err := userpool.New(cfg)
	if err != nil {
		return nil, err
	}
	h, err := Handler(ctx, cfg, caches, pool, time.Now)
	if err != nil {
		return nil, err
	}
	return function.HTTP(h), nil
}

// Handler is the dashboard over pool and the function's table, its
// sessions sealed with cfg.DashboardSessionKey, the companies it changes
// forgotten from caches, telling the time by now. Its payouts are the
// payments function's: the same services, their jobs on the same queues.
// The browser tests serve it over a test double of the pool.
func Handler(_ context.Context, cfg function.Config, caches base.Caches, pool identity.Pool, now func() time.Time) (http.Handler, error) {
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
	// The providers of the mode: the operator of the payouts; the card
	// issuer without a sealer (the dashboard issues no card), Stripe
	// Issuing in production mode, which freezes and unfreezes cards.
	p, err := cardissuer.Providers(cfg, db, providers.Deps{})
	if err != nil {
		return nil, err
	}
	sqsClient := queue.NewClient(cfg.AWS, cfg.SQSEndpoint)
	jobs, bulkJobs := queue.NewPublisher(sqsClient, cfg.PayoutsQueueURL), queue.NewPublisher(sqsClient, cfg.BulkPayoutsQueueURL)
	pays, err := services.Payments(cfg, db, p.Operator, jobs, bulkJobs, payments.Relay(jobs), caches.Fees, now)
	if err != nil {
		return nil, err
	}
	batches, err := services.Bulk(db, pays, bulkJobs, payments.Relay(jobs), services.PayoutErrors, now)
	if err != nil {
		return nil, err
	}
	manager, err := services.CardManager(db, p)
	if err != nil {
		return nil, err
	}
	// The client keys, rolled as the console rotates them.
	keys := companies.NewService(companies.Forgetting(store.NewCompanies(db), caches.Companies), now)
	// The endpoints' secrets, sealed under the webhook key as the
	// webhooks function seals them; a resend queued on the webhooks queue.
	v, err := keyvaults.Webhook(cfg, kmskeys.FromConfig)
	if err != nil {
		return nil, err
	}
	wh := store.NewWebhooks(db)
	endpoints := webhooks.NewEndpoints(wh, v, outbound.AllowLoopbackFromEnv(), now)
	deliveries := webhooks.NewLog(wh, queue.NewPublisher(sqsClient, cfg.WebhooksQueueURL))
	return dashboard.New(dashboard.Deps{Pool: pool, Sessions: sm, Wallets: balances, Activity: log,
		Payouts: pays, Batches: batches, Forms: store.NewIdempotency(db), Errors: Errors,
		Keys: keys, Endpoints: endpoints, Log: deliveries, Customers: directory, Cards: manager, Now: now})
}
