// Package walletsapi is the wallets function: wallets, their movements,
// fees, debts and exchange rates.
package walletsapi

import (
	"context"
	"time"

	"payments/pkg/auth/authhttp"
	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/customers/customershttp"
	"payments/pkg/debts"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/fees"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/companyroutes"
	"payments/pkg/function/services"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/guideline"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/providers"
	"payments/pkg/queue"
	"payments/pkg/reconcile/reconcilehttp"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue: the answers to the errors of
// what it links (function.Catalogue).
var Errors = function.Catalogue(walletshttp.Errors, fxhttp.Errors, feeshttp.Errors, debtshttp.Errors, paymentshttp.Errors, companieshttp.Errors, authhttp.Errors, limitshttp.Errors, idempotencyhttp.Errors, bulkhttp.Errors, cardshttp.Errors, customershttp.Errors, webhookshttp.Errors, operatorhookshttp.Errors, reconcilehttp.Errors)

// New builds the wallets function: /wallets, /partner/wallets,
// /wallet/…, POST /wallets/calculate-transfer-fees, the internal transfers
// and fundings (POST /wallets/{id}/transfer-internal, POST /wallets/fund),
// GET /debts, the conversion quote and the movements between wallets at
// the company's rates (conversions and deposits), behind the token guard.
// The routes that move money take an Idempotency-Key
// (companyroutes.Idempotent).
//
// Its caches are its own (base.NewCaches): they live as long as the
// Lambda instance.
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
	sqsClient := queue.NewClient(cfg.AWS, cfg.SQSEndpoint)
	rt.Use(companyroutes.Idempotent(db))
	p, err := services.Providers(cfg, db, providers.Deps{Funds: queue.NewPublisher(sqsClient, cfg.FundsQueueURL)})
	if err != nil {
		return nil, err
	}
	ws, err := services.Wallets(cfg, db, p, queue.NewPublisher(sqsClient, cfg.WebhooksQueueURL))
	if err != nil {
		return nil, err
	}
	conv, err := services.Converter(db, ws)
	if err != nil {
		return nil, err
	}
	walletshttp.Routes(rt, ws)
	feeshttp.Routes(rt, fees.NewService(store.NewFees(db)), guideline.Default())
	debtshttp.Routes(rt, debts.NewService(moneystore.NewDebts(db)))
	fxhttp.Routes(rt, conv.Rates)
	fxhttp.ConversionRoutes(rt, conv)
	return function.HTTP(rt), nil
}
