// Package services builds, over one table, the domain services that more
// than one function serves: the token guard, wallets, payments, cards and
// the Idempotency-Key middleware. It calls DynamoDB through pkg/store and
// nothing else: a queue, the card vault's key service or a bucket is given
// by the function, which alone builds the client it needs.
package services

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"payments/pkg/auth"
	"payments/pkg/cache"
	"payments/pkg/cards"
	"payments/pkg/companies"
	"payments/pkg/customers"
	"payments/pkg/fees"
	"payments/pkg/function"
	"payments/pkg/fx"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency"
	"payments/pkg/outbox"
	"payments/pkg/payments"
	"payments/pkg/providers/bank"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuerdb"
	"payments/pkg/providers/operator"
	"payments/pkg/providers/operator/operatordb"
	"payments/pkg/store"
	"payments/pkg/vault"
	"payments/pkg/wallets"
)

// DB returns the table of cfg through a new DynamoDB client: a function
// calls it once.
func DB(cfg function.Config) *store.DB {
	return store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
}

// CompanyCache is the one company cache of the process. Every token guard
// reads through it and the console's companies.Service forgets a company
// it changes, so where the console and the guards share a process (the
// local dev server, the tests) a rotation or deactivation takes effect at
// once; across Lambda instances it takes at most auth.CompanyCacheTTL.
var CompanyCache = auth.NewCompanyCache(auth.CompanyCacheTTL, time.Now)

// FeeCache is the one fee schedule cache of the process: the payments
// function reads schedules through it and the console's fees.Service
// forgets a schedule it replaces, as CompanyCache does for companies.
var FeeCache = cache.New[fees.Schedule](cache.Staleness, time.Now)

// TokenGuard returns the guard of every company-facing function: it admits
// requests with a valid Bearer token and puts the company id in the request
// context. It fails when cfg has no usable token secret or mode.
func TokenGuard(cfg function.Config, db *store.DB) (httpapi.Guard, error) {
	svc, err := Auth(cfg, db, nil)
	if err != nil {
		return nil, err
	}
	return svc.Guard(), nil
}

// Auth returns the token service over db's companies; limiter may be nil
// where no token is issued.
func Auth(cfg function.Config, db *store.DB, limiter auth.RateLimiter) (*auth.Service, error) {
	if len(cfg.TokenSecret) < auth.MinSecretBytes {
		return nil, fmt.Errorf("%w: the token secret (TOKEN_SECRET or TOKEN_SECRET_ARN) must be at least %d bytes", function.ErrConfig, auth.MinSecretBytes)
	}
	if cfg.Mode == "" {
		return nil, fmt.Errorf("%w: MODE is not set", function.ErrConfig)
	}
	ttl := cfg.TokenTTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	comps := companies.NewService(store.NewCompanies(db))
	return auth.NewService(auth.Config{Secret: cfg.TokenSecret, Mode: cfg.Mode, TTL: ttl}, comps, limiter, CompanyCache)
}

// IdempotentRoutes are the routes that move money, the one list of those
// that honour Idempotency-Key (docs/idempotency.md). The functions that
// serve them (payments, cards, wallets) each mount Idempotent; the others
// serve none of them.
var IdempotentRoutes = []string{
	// payments
	"POST /payment/payout",
	"POST /payment/collect",
	// cards
	"POST /cards",
	"POST /cards/{id}/fund",
	"POST /cards/{id}/withdraw",
	"POST /cards/{id}/terminate",
	// wallets
	"POST /partner/wallets/xaf-usd-conversion",
	"POST /wallets/deposit",
	"POST /wallets/{id}/transfer-internal",
	"POST /wallets/fund",
}

// Idempotent returns the middleware that serves IdempotentRoutes with
// Idempotency-Key, keeping the keys in db.
func Idempotent(db *store.DB) httpapi.Middleware {
	k := &idempotency.Keys{Store: store.NewIdempotency(db), Routes: IdempotentRoutes}
	return k.Wrap
}

// Wallets returns the wallets service over db, checking KYB through the
// companies in the same table. The operator console mounts
// wallets.AdminRoutes with it.
func Wallets(db *store.DB) *wallets.Service {
	return wallets.NewService(store.NewWallets(db), KYBChecker{companies.NewService(store.NewCompanies(db))})
}

// MovingWallets returns Wallets(db) for the routes that move money: it
// prices internal transfers by the company's fee schedule, publishes their
// events (and the conversions' and deposits') on the webhooks queue, and
// tells b (nil for none) of the fundings declared.
func MovingWallets(db *store.DB, webhooks function.Queue, b bank.Bank) *wallets.Service {
	svc := Wallets(db)
	svc.Fees = fees.NewService(store.NewFees(db))
	svc.Events = outbox.NewPublisher(store.NewOutbox(db), webhooks)
	svc.Bank = b
	return svc
}

// FX returns the exchange rates service over db, pricing conversions with
// the companies' fee schedules.
func FX(db *store.DB) *fx.Service {
	return fx.NewService(store.NewRates(db), fees.NewService(store.NewFees(db)))
}

// KYBChecker answers wallets.Companies and customers.Companies from the
// companies service.
type KYBChecker struct{ Companies *companies.Service }

// KYBApproved reports whether the company's KYB status is APPROVED; an
// unknown company is not approved.
func (k KYBChecker) KYBApproved(ctx context.Context, companyID string) (bool, error) {
	c, err := k.Companies.Get(ctx, companyID)
	if errors.Is(err, companies.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return c.KYBStatus == companies.KYBApproved, nil
}

// Operator returns the mobile-money operator of cfg's mode: the simulated
// sandbox operator, keeping its orders in db apart from ours, in sandbox
// mode. Production mode needs a real aggregator adapter (an
// operator.Gateway), which does not exist yet, so it is a configuration
// error rather than a silent sandbox.
func Operator(cfg function.Config, db *store.DB) (operator.Gateway, error) {
	if cfg.Mode == function.ModeSandbox {
		return operator.NewSandbox(operatordb.New(db.DB)), nil
	}
	return nil, fmt.Errorf("%w: MODE %q needs a real operator adapter (operator.Gateway) and none is configured; "+
		"only MODE=%s (the sandbox operator) can process payments", function.ErrConfig, cfg.Mode, function.ModeSandbox)
}

// Payments returns the payments service of the payout worker and the
// sweeper over db: jobs is the payouts queue, events are published to the
// webhooks queue, and gw is the operator (nil for a caller that never asks
// it). The payments function builds its own (paymentsapi.New).
func Payments(cfg function.Config, db *store.DB, gw operator.Gateway, jobs, webhooks function.Queue) *payments.Service {
	return payments.NewService(payments.Deps{
		Store:    store.NewPayments(db),
		Wallets:  store.NewWallets(db),
		Fees:     fees.NewService(store.NewFees(db)),
		Gateway:  gw,
		Jobs:     jobs,
		Events:   outbox.NewPublisher(store.NewOutbox(db), webhooks),
		Deadline: cfg.PaymentDeadline,
	})
}

// CardVault returns the vault of card secrets: under the KMS key of
// CARD_KEY_ARN in AWS, through the KeyService kms returns
// (kmskeys.FromConfig), under the local key CARD_KEY locally.
func CardVault(cfg function.Config, kms func(cfg aws.Config, endpoint, keyID string) vault.KeyService) (*vault.Vault, error) {
	if cfg.CardKeyARN != "" {
		return vault.New(kms(cfg.AWS, cfg.KMSEndpoint, cfg.CardKeyARN)), nil
	}
	key, err := vault.LocalKeyFromHex(cfg.CardKey)
	if err != nil {
		return nil, fmt.Errorf("%w: CARD_KEY: %v", function.ErrConfig, err)
	}
	local, err := vault.NewLocal(key)
	if err != nil {
		return nil, fmt.Errorf("%w: CARD_KEY: %v", function.ErrConfig, err)
	}
	return vault.New(local), nil
}

// Cards returns the cards service over db, sealing with v and publishing
// on the webhooks queue, with the issuer of cfg's mode: the sandbox
// issuer, keeping its records in db apart from ours, in sandbox mode; none
// in production mode, which has no issuer adapter yet, so that every change
// is refused (cards.ErrNoIssuer) and reads work.
func Cards(cfg function.Config, db *store.DB, v *vault.Vault, webhooks function.Queue) *cards.Service {
	var iss issuer.Issuer
	if cfg.Mode == function.ModeSandbox {
		iss = issuer.NewSandbox(issuerdb.New(db.DB), v)
	} else {
		slog.Warn("cards without a card issuer: changes are refused", "mode", cfg.Mode)
	}
	comps := companies.NewService(store.NewCompanies(db))
	events := outbox.NewPublisher(store.NewOutbox(db), webhooks)
	custs := customers.NewService(customers.Deps{Store: store.NewCustomers(db), Issuer: iss, Events: events})
	return cards.NewService(cards.Deps{
		Store:     store.NewCards(db),
		Customers: custs,
		Wallets:   Wallets(db),
		Companies: cardSlots{comps},
		Fees:      fees.NewService(store.NewFees(db)),
		Issuer:    iss,
		Vault:     v,
		Events:    events,
	})
}

// cardSlots answers cards.Companies from the companies service.
type cardSlots struct{ companies *companies.Service }

// CardSlots returns the company's card_slots.
func (c cardSlots) CardSlots(ctx context.Context, companyID string) (int, error) {
	co, err := c.companies.Get(ctx, companyID)
	if err != nil {
		return 0, err
	}
	return co.CardSlots, nil
}
