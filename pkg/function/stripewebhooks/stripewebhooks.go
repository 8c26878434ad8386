// Package stripewebhooks is the stripe-webhooks function: POST
// /issuer/stripe/webhooks, which Stripe Issuing calls with its events.
package stripewebhooks

import (
	"context"
	"fmt"
	"time"

	"payments/pkg/auth/authhttp"
	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/customers/customershttp"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/cardissuer"
	"payments/pkg/function/issuerreceivers"
	"payments/pkg/function/services"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/issuerhooks"
	"payments/pkg/issuerhooks/issuerhookshttp"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/providers/issuer"
	"payments/pkg/queue"
	"payments/pkg/reconcile/reconcilehttp"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue: the answers to the errors of
// what it links (function.Catalogue).
var Errors = function.Catalogue(issuerhookshttp.Errors, cardshttp.Errors, authhttp.Errors, bulkhttp.Errors, companieshttp.Errors, customershttp.Errors, debtshttp.Errors, webhookshttp.Errors, feeshttp.Errors, fxhttp.Errors, idempotencyhttp.Errors, limitshttp.Errors, paymentshttp.Errors, operatorhookshttp.Errors, reconcilehttp.Errors, walletshttp.Errors)

// New builds the stripe-webhooks function: POST /issuer/stripe/webhooks,
// without the token guard. An event whose Stripe-Signature verifies with
// one of the issuer's secrets (ISSUER_WEBHOOK_SECRET: Stripe's endpoint
// signing secrets, comma-separated) is read: an authorization request is
// decided in the request, as issuer-authorizations decides (one read of
// the card, one conditional write, its events in the outbox); the events
// we follow are queued on the issuer-events queue as the issuer's
// notifications, for the card-worker. A transaction's card is found at
// Stripe, once per card and process; a dispute is read at Stripe as it is
// now.
//
// Its fee schedule cache is its own (base.NewCaches): it lives as long
// as the Lambda instance.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	return NewWith(ctx, cfg, base.NewCaches(time.Now))
}

// NewWith is New over caches, which pkg/app shares with the other
// functions of its process.
func NewWith(ctx context.Context, cfg function.Config, caches base.Caches) (function.HTTPHandler, error) {
	db := base.DB(cfg)
	d, err := services.CardDecider(db, caches.Fees)
	if err != nil {
		return nil, err
	}
	var cards issuerhooks.StripeLookups = noStripeCards{}
	if c, err := cardissuer.New(cfg); err != nil {
		return nil, err
	} else if c != nil {
		cards = c
	}
	s, err := issuerreceivers.Stripe(cfg, d, queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.IssuerEventsQueueURL), cards)
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(Errors, nil)
	issuerhookshttp.StripeRoutes(rt, s)
	return function.HTTP(rt), nil
}

// noStripeCards is a sandbox stage's: none of its cards is at Stripe.
type noStripeCards struct{}

func (noStripeCards) CardReference(_ context.Context, id string) (string, error) {
	return "", fmt.Errorf("%w: card %s: a sandbox stage has no card at Stripe", issuer.ErrNotFound, id)
}

func (noStripeCards) CompleteDispute(_ context.Context, n *issuer.Notification) error {
	return fmt.Errorf("%w: event %s: a sandbox stage has no dispute at Stripe", issuer.ErrNotFound, n.ID)
}
