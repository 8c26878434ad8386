// Package cardsapi is the cards function: virtual cards, their customers'
// cards and transactions, and the sandbox card network.
package cardsapi

import (
	"context"

	"payments/pkg/cards"
	"payments/pkg/function"
	"payments/pkg/function/services"
	"payments/pkg/httpapi"
	"payments/pkg/providers"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/vault/kmskeys"
)

// New builds the cards function behind the token guard: /cards… and
// GET /customers/{id}/cards and /transactions. Issuing, funding,
// withdrawing and terminating take an Idempotency-Key
// (services.IdempotentRoutes).
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	db := services.DB(cfg)
	guard, err := services.TokenGuard(cfg, db)
	if err != nil {
		return nil, err
	}
	sqsClient := queue.NewClient(cfg.AWS, cfg.SQSEndpoint)
	svc, p, err := service(cfg, db, queue.NewPublisher(sqsClient, cfg.WebhooksQueueURL))
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(function.Errors, guard)
	rt.Use(services.Idempotent(db))
	cards.Routes(rt, svc)
	if p.Sandbox {
		sb, err := Network(cfg, db, svc, queue.NewPublisher(sqsClient, cfg.IssuerEventsQueueURL))
		if err != nil {
			return nil, err
		}
		cards.SandboxRoutes(rt, sb)
	}
	return function.HTTP(rt), nil
}

// Service returns the cards service over db, its card secrets sealed under
// the KMS key of cfg (services.CardVault), its events published on
// webhooks, with the card issuer of cfg's mode.
func Service(cfg function.Config, db *store.DB, webhooks function.Queue) (*cards.Service, error) {
	svc, _, err := service(cfg, db, webhooks)
	return svc, err
}

// service is Service, and the providers of cfg's mode.
func service(cfg function.Config, db *store.DB, webhooks function.Queue) (*cards.Service, providers.Providers, error) {
	v, err := services.CardVault(cfg, kmskeys.FromConfig)
	if err != nil {
		return nil, providers.Providers{}, err
	}
	p, err := services.Providers(cfg, db, providers.Deps{Sealer: v})
	if err != nil {
		return nil, providers.Providers{}, err
	}
	svc, err := services.Cards(db, p, v, webhooks)
	return svc, p, err
}

// Network returns the card-network sandbox of svc: the simulated network
// (services.CardNetwork) asks for each authorization's decision through
// the handler of POST /issuer/authorizations, in this process, waiting
// cfg's decision deadline, and reports the rest through POST
// /issuer/webhooks's onto issuerEvents, the queue that the card-worker
// applies.
func Network(cfg function.Config, db *store.DB, svc *cards.Service, issuerEvents function.Queue) (*cards.Sandbox, error) {
	n, err := services.CardNetwork(cfg, db, issuerEvents)
	if err != nil {
		return nil, err
	}
	auths, err := function.IssuerAuthorizations(cfg, svc)
	if err != nil {
		return nil, err
	}
	n.Ask, n.Deadline = auths.Ask, cfg.IssuerDecisionDeadline
	return &cards.Sandbox{Cards: svc, Network: n}, nil
}
