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
	"payments/pkg/store"
	"payments/pkg/wallets"
)

// NewWallets builds the wallets function: /wallets, /partner/wallets,
// /wallet/…, POST /wallets/calculate-transfer-fees and GET /debts, behind
// the token guard.
func NewWallets(ctx context.Context, cfg Config) (HTTPHandler, error) {
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	guard, err := tokenGuard(cfg, db)
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(Errors, guard)
	wallets.Routes(rt, walletsService(db))
	fees.Routes(rt, fees.NewService(store.NewFees(db)), guideline.Default())
	debts.Routes(rt, debts.NewService(store.NewDebts(db)))
	fx.Routes(rt, fxService(db))
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
