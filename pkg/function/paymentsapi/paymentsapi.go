// Package paymentsapi is the payments function: balances, payouts,
// collections and their status.
package paymentsapi

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
	"payments/pkg/function/companyroutes"
	"payments/pkg/function/services"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/payments"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/providers"
	"payments/pkg/queue"
	"payments/pkg/reconcile/reconcilehttp"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue: the answers to the errors of
// what it links (function.Catalogue).
var Errors = function.Catalogue(paymentshttp.Errors, bulkhttp.Errors, walletshttp.Errors, feeshttp.Errors, companieshttp.Errors, authhttp.Errors, limitshttp.Errors, idempotencyhttp.Errors, cardshttp.Errors, customershttp.Errors, debtshttp.Errors, webhookshttp.Errors, fxhttp.Errors, operatorhookshttp.Errors, reconcilehttp.Errors)

// New builds the payments function behind the token guard:
// GET /payment/balance, POST /payment/payout, POST /payment/collect,
// GET /payment/transactions, GET /payment/transactions/{transactionId}/status,
// GET /payment/guideline and the bulk payout routes (bulkhttp.Routes). In
// production mode, which has no operator adapter yet (operator.None), it
// serves the reads and refuses new payouts, batches and collections with
// 503 before anything is written. Payouts, batches and collections take an
// Idempotency-Key (companyroutes.Idempotent: their routes move money). Its
// caches are its own (base.NewCaches): they live as long as the Lambda
// instance.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	return NewWith(ctx, cfg, base.NewCaches(time.Now))
}

// NewWith is New over caches, which pkg/app shares with the other
// functions of its process.
func NewWith(ctx context.Context, cfg function.Config, caches base.Caches) (function.HTTPHandler, error) {
	db := base.DB(cfg)
	guard, err := tokenkeys.Guard(ctx, cfg, db, caches.Companies)
	if err != nil {
		return nil, err
	}
	rt, err := companyroutes.Router(cfg, guard, db, Errors)
	if err != nil {
		return nil, err
	}
	p, err := services.Providers(cfg, db, providers.Deps{})
	if err != nil {
		return nil, err
	}
	sqsClient := queue.NewClient(cfg.AWS, cfg.SQSEndpoint)
	jobs, bulkJobs := queue.NewPublisher(sqsClient, cfg.PayoutsQueueURL), queue.NewPublisher(sqsClient, cfg.BulkPayoutsQueueURL)
	// The payout worker publishes the events (docs/publication.md).
	svc, err := services.Payments(cfg, db, p.Operator, jobs, bulkJobs, payments.Relay(jobs), caches.Fees, time.Now)
	if err != nil {
		return nil, err
	}
	// A batch's chunk jobs go to the bulk payouts queue (docs/bulk.md).
	batches, err := services.Bulk(db, svc, bulkJobs, payments.Relay(jobs), services.PayoutErrors, time.Now)
	if err != nil {
		return nil, err
	}
	balances, err := services.Balances(db)
	if err != nil {
		return nil, err
	}
	rt.Use(companyroutes.Idempotent(db))
	walletshttp.PaymentRoutes(rt, balances)
	paymentshttp.Routes(rt, svc)
	bulkhttp.Routes(rt, batches)
	return function.HTTP(rt), nil
}
