// Package paymentsapi is the payments function: balances, payouts,
// collections and their status.
package paymentsapi

import (
	"context"

	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/function"
	"payments/pkg/function/services"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/payments"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/providers"
	"payments/pkg/queue"
	"payments/pkg/wallets/walletshttp"
)

// New builds the payments function behind the token guard:
// GET /payment/balance, POST /payment/payout, POST /payment/collect,
// GET /payment/transactions, GET /payment/transactions/{transactionId}/status,
// GET /payment/guideline and the bulk payout routes (bulkhttp.Routes). In
// production mode, which has no operator adapter yet (operator.None), it
// serves the reads and refuses new payouts, batches and collections with
// 503 before anything is written. Payouts, batches and collections take an
// Idempotency-Key (services.IdempotentRoutes).
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	db := services.DB(cfg)
	guard, err := tokenkeys.Guard(ctx, cfg, db)
	if err != nil {
		return nil, err
	}
	rt, err := services.CompanyRouter(cfg, guard, db)
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
	svc, err := services.Payments(cfg, db, p.Operator, jobs, bulkJobs, payments.Relay(jobs))
	if err != nil {
		return nil, err
	}
	// A batch's chunk jobs go to the bulk payouts queue (docs/bulk.md).
	batches, err := services.Bulk(db, svc, bulkJobs, payments.Relay(jobs))
	if err != nil {
		return nil, err
	}
	balances, err := services.Balances(db)
	if err != nil {
		return nil, err
	}
	rt.Use(services.Idempotent(db))
	walletshttp.PaymentRoutes(rt, balances)
	paymentshttp.Routes(rt, svc)
	bulkhttp.Routes(rt, batches)
	return function.HTTP(rt), nil
}
