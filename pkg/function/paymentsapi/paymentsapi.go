// Package paymentsapi is the payments function: balances, payouts,
// collections and their status.
package paymentsapi

import (
	"context"
	"log/slog"

	"payments/pkg/fees"
	"payments/pkg/function"
	"payments/pkg/function/services"
	"payments/pkg/httpapi"
	"payments/pkg/payments"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/wallets"
)

// New builds the payments function behind the token guard:
// GET /payment/balance, POST /payment/payout, POST /payment/collect,
// GET /payment/transactions, GET /payment/transactions/{transactionId}/status
// and GET /payment/guideline. In production mode, which has no operator
// adapter yet (see services.Operator), it serves the reads and refuses new
// payouts and collections with 503 before anything is written. Payouts and
// collections take an Idempotency-Key (services.IdempotentRoutes).
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	db := services.DB(cfg)
	guard, err := services.TokenGuard(cfg, db)
	if err != nil {
		return nil, err
	}
	gw, err := services.Operator(cfg, db)
	if err != nil {
		slog.Warn("payments without an operator: payouts and collections are refused", "error", err)
		gw = nil
	}
	rt := httpapi.NewRouter(function.Errors, guard)
	rt.Use(services.Idempotent(db))
	wallets.PaymentRoutes(rt, services.Wallets(db))
	jobs := queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.PayoutsQueueURL)
	payments.Routes(rt, payments.NewService(payments.Deps{
		Store:    store.NewPayments(db),
		Wallets:  store.NewWallets(db),
		Fees:     fees.NewService(fees.CachedStore(store.NewFees(db), services.FeeCache)),
		Gateway:  gw,
		Jobs:     jobs,
		Events:   payments.Relay(jobs), // the payout worker publishes them (docs/publication.md)
		Deadline: cfg.PaymentDeadline,
	}))
	return function.HTTP(rt), nil
}
