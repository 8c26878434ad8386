// Package customersapi is the customers function: enrolment and the
// customers' records.
package customersapi

import (
	"context"
	"time"

	"payments/pkg/auth/authhttp"
	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/companies"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/customers"
	"payments/pkg/customers/customershttp"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/documents"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/cardissuer"
	"payments/pkg/function/companyroutes"
	"payments/pkg/function/services"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/outbound"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/providers"
	"payments/pkg/queue"
	"payments/pkg/reconcile/reconcilehttp"
	"payments/pkg/store"
	"payments/pkg/store/customerstore"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue: the answers to the errors of
// what it links (function.Catalogue).
var Errors = function.Catalogue(customershttp.Errors, companieshttp.Errors, authhttp.Errors, limitshttp.Errors, idempotencyhttp.Errors, bulkhttp.Errors, cardshttp.Errors, debtshttp.Errors, webhookshttp.Errors, feeshttp.Errors, fxhttp.Errors, paymentshttp.Errors, operatorhookshttp.Errors, reconcilehttp.Errors, walletshttp.Errors)

// New builds the customers function behind the token guard:
// POST /customers/enroll, POST /customers, GET /customers and
// GET /customers/{id}. Document URLs are fetched by customers.NewFetcher.
// Its company cache is its own (base.NewCaches): it lives as long as
// the Lambda instance.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	return NewWith(ctx, cfg, base.NewCaches(time.Now), Fetcher(), time.Now)
}

// Fetcher returns the fetcher of the documents' URLs (customers.NewFetcher),
// which reaches loopback addresses only where OUTBOUND_ALLOW_LOOPBACK=true
// (the local stack), read from the process environment.
func Fetcher() customers.Fetcher {
	return customers.NewFetcher(outbound.WithAllowLoopback(outbound.AllowLoopbackFromEnv()))
}

// NewWith is New over caches, which pkg/app shares with the other
// functions of its process, with the document fetcher and the clock given:
// tests trust their own CA and move time.
func NewWith(ctx context.Context, cfg function.Config, caches base.Caches, fetcher customers.Fetcher, now func() time.Time) (function.HTTPHandler, error) {
	db := base.DB(cfg)
	guard, err := tokenkeys.Guard(ctx, cfg, db, caches.Companies)
	if err != nil {
		return nil, err
	}
	rt, err := companyroutes.Router(cfg, guard, db, Errors)
	if err != nil {
		return nil, err
	}
	svc, err := service(cfg, db, fetcher, now)
	if err != nil {
		return nil, err
	}
	customershttp.Routes(rt, svc)
	return function.HTTP(rt), nil
}

// service returns the customers service over db and the documents bucket,
// with the providers of cfg's mode: the sandbox KYC verifier and card
// issuer, which keep their records in db apart from ours, in sandbox mode;
// in production mode Stripe Issuing (cardissuer) and kyc.None, which has no
// adapter yet, so that enrolments wait for the operator console's review
// (customers.PendingReview) rather than being verified by a simulation.
// now is its clock.
func service(cfg function.Config, db *store.DB, fetcher customers.Fetcher, now func() time.Time) (*customers.Service, error) {
	docs := documents.New(documents.NewClient(cfg.AWS, cfg.S3Endpoint), cfg.DocumentsBucket)
	p, err := cardissuer.Providers(cfg, db, providers.Deps{Documents: docs}) // its issuer registers cardholders only
	if err != nil {
		return nil, err
	}
	webhooks := queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL)
	return customers.NewService(customers.Deps{
		Store:     customerstore.NewCustomers(db),
		Companies: services.KYBChecker{Companies: companies.NewService(store.NewCompanies(db), nil)},
		Documents: docs,
		Fetcher:   fetcher,
		Verifier:  p.KYC,
		Issuer:    p.Issuer,
		Events:    services.Events(db, webhooks),
		Now:       now,
	})
}
