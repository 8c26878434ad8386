// Package cardnetwork is the card-network function: the card-network
// sandbox's routes, with which a company plays the merchant and the card
// network on its own cards (sandbox mode only).
package cardnetwork

import (
	"context"
	"time"

	"payments/pkg/auth/authhttp"
	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/cards"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/customers/customershttp"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/companyroutes"
	"payments/pkg/function/issuerreceivers"
	"payments/pkg/function/services"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/issuerhooks/issuerhookshttp"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/providers"
	"payments/pkg/queue"
	"payments/pkg/reconcile/reconcilehttp"
	"payments/pkg/store"
	"payments/pkg/vault"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue: the answers to the errors of
// what it links (function.Catalogue).
var Errors = function.Catalogue(cardshttp.Errors, issuerhookshttp.Errors, walletshttp.Errors, feeshttp.Errors, companieshttp.Errors, authhttp.Errors, limitshttp.Errors, idempotencyhttp.Errors, bulkhttp.Errors, customershttp.Errors, debtshttp.Errors, webhookshttp.Errors, fxhttp.Errors, paymentshttp.Errors, operatorhookshttp.Errors, reconcilehttp.Errors)

// New builds the card-network function behind the token guard and the
// Idempotency-Key middleware: in sandbox mode, POST /sandbox/cards/{id}/authorizations and …/terminate, POST
// /sandbox/card-transactions/{transactionId}/settle, …/reverse and
// …/refund; in production mode, no route (404 ROUTE_NOT_FOUND). Its cards
// service seals and opens no card secret (vault.NoKeys): it issues and
// reveals nothing, and links no KMS client.
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
	p, err := services.Providers(cfg, db, providers.Deps{})
	if err != nil {
		return nil, err
	}
	if !p.Sandbox {
		return function.HTTP(rt), nil
	}
	sqsClient := queue.NewClient(cfg.AWS, cfg.SQSEndpoint)
	svc, err := services.Cards(db, p, vault.New(vault.NoKeys), queue.NewPublisher(sqsClient, cfg.WebhooksQueueURL), nil, caches.Fees, time.Now)
	if err != nil {
		return nil, err
	}
	sb, err := Network(cfg, db, svc, queue.NewPublisher(sqsClient, cfg.IssuerEventsQueueURL))
	if err != nil {
		return nil, err
	}
	rt.Use(companyroutes.Idempotent(db))
	cardshttp.SandboxRoutes(rt, sb)
	return function.HTTP(rt), nil
}

// Network returns the card-network sandbox of svc: the simulated network
// (services.CardNetwork) asks for each authorization's decision through
// the handler of POST /issuer/authorizations, in this process, waiting
// cfg's decision deadline, and reports the rest through POST
// /issuer/webhooks's onto issuerEvents, the queue that the card-worker
// applies.
func Network(cfg function.Config, db *store.DB, svc *cards.Service, issuerEvents function.Queue) (*cards.Sandbox, error) {
	hooks, err := issuerreceivers.Notifications(cfg, issuerEvents, time.Now)
	if err != nil {
		return nil, err
	}
	auths, err := issuerreceivers.Authorizations(cfg, svc)
	if err != nil {
		return nil, err
	}
	n := services.CardNetwork(db, auths.Ask, hooks.Deliver, cfg.IssuerDecisionDeadline)
	return &cards.Sandbox{Cards: svc, Network: n, Effects: store.NewIdempotency(db)}, nil
}
