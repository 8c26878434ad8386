package app

import (
	"context"
	"errors"

	"payments/pkg/companies"
	"payments/pkg/debts"
	"payments/pkg/fees"
	"payments/pkg/fx"
	"payments/pkg/guideline"
	"payments/pkg/httpapi"
	"payments/pkg/outbox"
	"payments/pkg/providers/bank"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/wallets"
)

// NewWallets builds the wallets function: /wallets, /partner/wallets,
// /wallet/…, POST /wallets/calculate-transfer-fees, the internal transfers
// and fundings (POST /wallets/{id}/transfer-internal, POST /wallets/fund),
// GET /debts, the conversion quote and the movements between wallets at
// the company's rates (conversions and deposits), behind the token guard.
// The routes that move money take an Idempotency-Key (idempotentRoutes).
func NewWallets(ctx context.Context, cfg Config) (HTTPHandler, error) {
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	guard, err := tokenGuard(cfg, db)
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(Errors, guard)
	rt.Use(idempotent(db))
	var b bank.Bank
	if cfg.Mode == ModeSandbox {
		b = bank.NewSandbox(queueSender(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.FundsQueueURL, "FUNDS_QUEUE_URL"))
	}
	ws, rates := movingWallets(cfg, db, b), fxService(db)
	wallets.Routes(rt, ws)
	fees.Routes(rt, fees.NewService(store.NewFees(db)), guideline.Default())
	debts.Routes(rt, debts.NewService(store.NewDebts(db)))
	fx.Routes(rt, rates)
	fx.ConversionRoutes(rt, &fx.Converter{Rates: rates, Wallets: ws, Store: store.NewConversions(db), Events: ws.Events})
	return lambdaHTTP(rt), nil
}

// fxService returns the exchange rates service over db, pricing
// conversions with the companies' fee schedules.
func fxService(db *store.DB) *fx.Service {
	return fx.NewService(store.NewRates(db), fees.NewService(store.NewFees(db)))
}

// walletsService returns the wallets service over db, checking KYB through
// the companies in the same table. The operator console mounts
// wallets.AdminRoutes with it.
func walletsService(db *store.DB) *wallets.Service {
	return wallets.NewService(store.NewWallets(db), kybChecker{companies.NewService(store.NewCompanies(db))})
}

// movingWallets returns walletsService(db) for the routes that move money:
// it prices internal transfers by the company's fee schedule, publishes
// their events (and the conversions' and deposits') on the webhooks queue,
// and tells b (nil for none) of the fundings declared.
func movingWallets(cfg Config, db *store.DB, b bank.Bank) *wallets.Service {
	svc := walletsService(db)
	svc.Fees = fees.NewService(store.NewFees(db))
	svc.Events = outbox.NewPublisher(store.NewOutbox(db),
		queueSender(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL, "WEBHOOKS_QUEUE_URL"))
	svc.Bank = b
	return svc
}

// kybChecker answers wallets.Companies and customers.Companies from the
// companies service.
type kybChecker struct{ companies *companies.Service }

// KYBApproved reports whether the company's KYB status is APPROVED; an
// unknown company is not approved.
func (k kybChecker) KYBApproved(ctx context.Context, companyID string) (bool, error) {
	c, err := k.companies.Get(ctx, companyID)
	if errors.Is(err, companies.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return c.KYBStatus == companies.KYBApproved, nil
}
