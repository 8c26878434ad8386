// Package customersapi is the customers function: enrolment and the
// customers' records.
package customersapi

import (
	"context"
	"time"

	"payments/pkg/companies"
	"payments/pkg/customers"
	"payments/pkg/customers/customershttp"
	"payments/pkg/documents"
	"payments/pkg/function"
	"payments/pkg/function/cardissuer"
	"payments/pkg/function/services"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/outbound"
	"payments/pkg/providers"
	"payments/pkg/queue"
	"payments/pkg/store"
)

// New builds the customers function behind the token guard:
// POST /customers/enroll, POST /customers, GET /customers and
// GET /customers/{id}. Document URLs are fetched by customers.NewFetcher.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	fetcher := customers.NewFetcher(outbound.WithAllowLoopback(outbound.AllowLoopbackFromEnv()))
	return NewWith(ctx, cfg, fetcher, time.Now)
}

// NewWith is New with the document fetcher and the clock given: tests
// trust their own CA and move time.
func NewWith(ctx context.Context, cfg function.Config, fetcher customers.Fetcher, now func() time.Time) (function.HTTPHandler, error) {
	db := services.DB(cfg)
	guard, err := tokenkeys.Guard(ctx, cfg, db)
	if err != nil {
		return nil, err
	}
	rt, err := services.CompanyRouter(cfg, guard, db)
	if err != nil {
		return nil, err
	}
	svc, err := service(cfg, db, fetcher)
	if err != nil {
		return nil, err
	}
	svc.Now = now
	customershttp.Routes(rt, svc)
	return function.HTTP(rt), nil
}

// service returns the customers service over db and the documents bucket,
// with the providers of cfg's mode: the sandbox KYC verifier and card
// issuer, which keep their records in db apart from ours, in sandbox mode;
// in production mode Stripe Issuing (cardissuer) and kyc.None, which has no
// adapter yet, so that enrolments wait for the operator console's review
// (customers.PendingReview) rather than being verified by a simulation.
func service(cfg function.Config, db *store.DB, fetcher customers.Fetcher) (*customers.Service, error) {
	docs := documents.New(documents.NewClient(cfg.AWS, cfg.S3Endpoint), cfg.DocumentsBucket)
	deps, err := cardissuer.With(cfg, providers.Deps{Documents: docs}) // its issuer registers cardholders only
	if err != nil {
		return nil, err
	}
	p, err := services.Providers(cfg, db, deps)
	if err != nil {
		return nil, err
	}
	webhooks := queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL)
	return customers.NewService(customers.Deps{
		Store:     store.NewCustomers(db),
		Companies: services.KYBChecker{Companies: companies.NewService(store.NewCompanies(db))},
		Documents: docs,
		Fetcher:   fetcher,
		Verifier:  p.KYC,
		Issuer:    p.Issuer,
		Events:    services.Events(db, webhooks),
	})
}
