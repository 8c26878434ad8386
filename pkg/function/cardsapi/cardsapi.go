// Package cardsapi is the cards function: virtual cards, their customers'
// cards and transactions.
package cardsapi

import (
	"context"
	"fmt"
	"time"

	"payments/pkg/auth/authhttp"
	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/cache"
	"payments/pkg/cards"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/customers/customershttp"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/fees"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/cardissuer"
	"payments/pkg/function/companyroutes"
	"payments/pkg/function/keyvaults"
	"payments/pkg/function/services"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/providers"
	"payments/pkg/queue"
	"payments/pkg/reconcile/reconcilehttp"
	"payments/pkg/store"
	"payments/pkg/vault/kmskeys"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue: the answers to the errors of
// what it links (function.Catalogue).
var Errors = function.Catalogue(cardshttp.Errors, customershttp.Errors, walletshttp.Errors, feeshttp.Errors, companieshttp.Errors, authhttp.Errors, limitshttp.Errors, idempotencyhttp.Errors, bulkhttp.Errors, debtshttp.Errors, webhookshttp.Errors, fxhttp.Errors, paymentshttp.Errors, operatorhookshttp.Errors, reconcilehttp.Errors)

// New builds the cards function behind the token guard: /cards… and
// GET /customers/{id}/cards and /transactions. Issuing, funding,
// withdrawing, terminating and opening a dispute take an Idempotency-Key
// (companyroutes.Idempotent: their routes move money).
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
	svc, err := Service(cfg, db, queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL), caches.Fees)
	if err != nil {
		return nil, err
	}
	rt.Use(companyroutes.Idempotent(db))
	cardshttp.Routes(rt, svc)
	return function.HTTP(rt), nil
}

// Service returns the cards service over db, its card secrets sealed under
// the KMS key of cfg (keyvaults.Card), its events published on
// webhooks, with the card issuer of cfg's mode and each company's reveals
// limited to cfg.RevealLimit an hour, reading fee schedules through
// feeCache (the function's, base.Caches).
func Service(cfg function.Config, db *store.DB, webhooks function.Queue, feeCache *cache.Cache[fees.Schedule]) (*cards.Service, error) {
	if cfg.RevealLimit < 1 {
		return nil, fmt.Errorf("%w: REVEAL_LIMIT_PER_HOUR must be at least 1, not %d", function.ErrConfig, cfg.RevealLimit)
	}
	v, err := keyvaults.Card(cfg, kmskeys.FromConfig)
	if err != nil {
		return nil, err
	}
	p, err := cardissuer.Providers(cfg, db, providers.Deps{Sealer: v})
	if err != nil {
		return nil, err
	}
	return services.Cards(db, p, v, webhooks, store.NewRateLimiter(db, "reveal", cfg.RevealLimit, time.Hour), feeCache, time.Now)
}
