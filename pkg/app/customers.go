package app

import (
	"context"
	"log/slog"
	"time"

	"payments/pkg/companies"
	"payments/pkg/customers"
	"payments/pkg/documents"
	"payments/pkg/httpapi"
	"payments/pkg/outbound"
	"payments/pkg/outbox"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/kyc"
	"payments/pkg/queue"
	"payments/pkg/store"
)

// NewCustomers builds the customers function behind the token guard:
// POST /customers/enroll, POST /customers, GET /customers and
// GET /customers/{id}. Document URLs are fetched by customers.NewFetcher.
func NewCustomers(ctx context.Context, cfg Config) (HTTPHandler, error) {
	fetcher := customers.NewFetcher(outbound.WithAllowLoopback(outbound.AllowLoopbackFromEnv()))
	return newCustomers(cfg, fetcher, time.Now)
}

// newCustomers is NewCustomers with the document fetcher and the clock
// given: tests trust their own CA and move time.
func newCustomers(cfg Config, fetcher customers.Fetcher, now func() time.Time) (HTTPHandler, error) {
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	guard, err := tokenGuard(cfg, db)
	if err != nil {
		return nil, err
	}
	svc := customersService(cfg, db, fetcher)
	svc.Now = now
	rt := httpapi.NewRouter(Errors, guard)
	customers.Routes(rt, svc)
	return lambdaHTTP(rt), nil
}

// customersService returns the customers service over db and the
// documents bucket, with the providers of cfg's mode: the sandbox KYC
// verifier and card issuer, which keep their records in db apart from ours,
// in sandbox mode; none in production mode, which has no adapters yet, so
// that enrolments are refused (ErrNoProviders) rather than verified by a
// simulation.
func customersService(cfg Config, db *store.DB, fetcher customers.Fetcher) *customers.Service {
	docs := documents.New(documents.NewClient(cfg.AWS, cfg.S3Endpoint), cfg.DocumentsBucket)
	var verifier kyc.Verifier
	var iss issuer.Cardholders
	if cfg.Mode == ModeSandbox {
		verifier = kyc.NewSandbox(docs, store.NewSandboxKYC(db))
		iss = issuer.NewSandbox(store.NewSandboxIssuer(db), nil) // cardholders only
	} else {
		slog.Warn("customers without a KYC verifier or card issuer: enrolments are refused", "mode", cfg.Mode)
	}
	sqsClient := queue.NewClient(cfg.AWS, cfg.SQSEndpoint)
	return customers.NewService(customers.Deps{
		Store:     store.NewCustomers(db),
		Companies: kybChecker{companies.NewService(store.NewCompanies(db))},
		Documents: docs,
		Fetcher:   fetcher,
		Verifier:  verifier,
		Issuer:    iss,
		Events:    outbox.NewPublisher(store.NewOutbox(db), queueSender(sqsClient, cfg.WebhooksQueueURL, "WEBHOOKS_QUEUE_URL")),
	})
}
