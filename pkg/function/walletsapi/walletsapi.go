// Package walletsapi is the wallets function: wallets, their movements,
// fees, debts and exchange rates.
package walletsapi

import (
	"context"

	"payments/pkg/debts"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/fees"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/services"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/guideline"
	"payments/pkg/providers"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/wallets/walletshttp"
)

// New builds the wallets function: /wallets, /partner/wallets,
// /wallet/…, POST /wallets/calculate-transfer-fees, the internal transfers
// and fundings (POST /wallets/{id}/transfer-internal, POST /wallets/fund),
// GET /debts, the conversion quote and the movements between wallets at
// the company's rates (conversions and deposits), behind the token guard.
// The routes that move money take an Idempotency-Key
// (services.IdempotentRoutes).
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
	sqsClient := queue.NewClient(cfg.AWS, cfg.SQSEndpoint)
	rt.Use(services.Idempotent(db))
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
	debtshttp.Routes(rt, debts.NewService(store.NewDebts(db)))
	fxhttp.Routes(rt, conv.Rates)
	fxhttp.ConversionRoutes(rt, conv)
	return function.HTTP(rt), nil
}
