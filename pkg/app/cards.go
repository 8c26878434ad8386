package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/cards"
	"payments/pkg/companies"
	"payments/pkg/customers"
	"payments/pkg/fees"
	"payments/pkg/httpapi"
	"payments/pkg/outbox"
	"payments/pkg/providers/issuer"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/vault"
	"payments/pkg/vault/kmskeys"
)

// NewCards builds the cards function behind the token guard: /cards…
// and GET /customers/{id}/cards and /transactions. Issuing, funding,
// withdrawing and terminating take an Idempotency-Key (idempotentRoutes).
func NewCards(ctx context.Context, cfg Config) (HTTPHandler, error) {
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	guard, err := tokenGuard(cfg, db)
	if err != nil {
		return nil, err
	}
	svc, err := cardsService(cfg, db)
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(Errors, guard)
	rt.Use(idempotent(db))
	cards.Routes(rt, svc)
	if cfg.Mode == ModeSandbox {
		sb, err := cardNetwork(cfg, svc)
		if err != nil {
			return nil, err
		}
		cards.SandboxRoutes(rt, sb)
	}
	return lambdaHTTP(rt), nil
}

// cardNetwork returns the card-network sandbox of svc: the simulated
// network reports each transaction as the issuer would, signed with the
// issuer's secret and accepted by the handler of POST /issuer/webhooks, in
// this process, onto the issuer-events queue that the card-worker applies.
func cardNetwork(cfg Config, svc *cards.Service) (*cards.Sandbox, error) {
	hooks, err := issuerHooks(cfg)
	if err != nil {
		return nil, err
	}
	return &cards.Sandbox{Cards: svc, Network: issuer.NewSandboxNetwork(hooks.Deliver)}, nil
}

// cardVault returns the vault of card secrets: under the KMS key of
// CARD_KEY_ARN in AWS, under the local key CARD_KEY locally.
func cardVault(cfg Config) (*vault.Vault, error) {
	if cfg.CardKeyARN != "" {
		return vault.New(kmskeys.New(kmskeys.NewClient(cfg.AWS, cfg.KMSEndpoint), cfg.CardKeyARN)), nil
	}
	key, err := vault.LocalKeyFromHex(cfg.CardKey)
	if err != nil {
		return nil, fmt.Errorf("%w: CARD_KEY: %v", ErrConfig, err)
	}
	local, err := vault.NewLocal(key)
	if err != nil {
		return nil, fmt.Errorf("%w: CARD_KEY: %v", ErrConfig, err)
	}
	return vault.New(local), nil
}

// cardsService returns the cards service over db with the issuer of cfg's
// mode: the sandbox issuer, keeping its records in db apart from ours, in
// sandbox mode; none in production mode, which has no issuer adapter yet,
// so that every change is refused (cards.ErrNoIssuer) and reads work.
func cardsService(cfg Config, db *store.DB) (*cards.Service, error) {
	v, err := cardVault(cfg)
	if err != nil {
		return nil, err
	}
	var iss issuer.Issuer
	if cfg.Mode == ModeSandbox {
		iss = issuer.NewSandbox(store.NewSandboxIssuer(db), v)
	} else {
		slog.Warn("cards without a card issuer: changes are refused", "mode", cfg.Mode)
	}
	comps := companies.NewService(store.NewCompanies(db))
	events := outbox.NewPublisher(store.NewOutbox(db),
		queueSender(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL, "WEBHOOKS_QUEUE_URL"))
	custs := customers.NewService(customers.Deps{Store: store.NewCustomers(db), Issuer: iss, Events: events})
	return cards.NewService(cards.Deps{
		Store:     store.NewCards(db),
		Customers: custs,
		Wallets:   walletsService(db),
		Companies: cardSlots{comps},
		Fees:      fees.NewService(store.NewFees(db)),
		Issuer:    iss,
		Vault:     v,
		Events:    events,
	}), nil
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

// cardSweepGrace is how long a card movement may stay open before the
// sweeper finishes it: longer than any request that is still at it.
const cardSweepGrace = time.Minute
