// Package cardworker is the card-worker function, the consumer of the
// card issuer's notifications.
package cardworker

import (
	"context"
	"time"

	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/services"
	"payments/pkg/providers"
	"payments/pkg/providers/issuer"
	"payments/pkg/queue"
)

// New builds the card-worker function: the consumer of the
// issuer-events queue, which applies each notification of the card issuer
// once per its event id, whatever the queue repeats (cards.Applier):
// authorizations decided, settlements, reversals and refunds, their fees,
// terminations; then tells the issuer what each moved on the card: the
// sandbox issuer in sandbox mode; nothing in production mode, whose
// issuer, Stripe Issuing, reported it (issuer.Reported).
// A message that is not a notification fails, and reaches the dead-letter
// queue after its retries. Its fee schedule cache is its own
// (base.NewCaches): it lives as long as the Lambda instance.
func New(ctx context.Context, cfg function.Config) (function.SQSHandler, error) {
	return NewWith(ctx, cfg, base.NewCaches(time.Now))
}

// NewWith is New over caches, which pkg/app shares with the other
// functions of its process.
func NewWith(ctx context.Context, cfg function.Config, caches base.Caches) (function.SQSHandler, error) {
	db := base.DB(cfg)
	// Its issuer issues no card; in production mode it is Stripe Issuing,
	// whose events the notifications are: nothing to post or acknowledge.
	p, err := services.Providers(cfg, db, providers.Deps{CardIssuer: issuer.Reported})
	if err != nil {
		return nil, err
	}
	svc, err := services.CardApplier(db, p, queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL), caches.Fees)
	if err != nil {
		return nil, err
	}
	return queue.Batch(func(ctx context.Context, m queue.Message) error {
		n, err := issuer.ParseNotification(m.Body)
		if err != nil {
			return err
		}
		return svc.Apply(ctx, n)
	}), nil
}
