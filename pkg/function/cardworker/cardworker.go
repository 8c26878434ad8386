// Package cardworker is the card-worker function, the consumer of the
// card issuer's notifications.
package cardworker

import (
	"context"

	"payments/pkg/cards"
	"payments/pkg/fees"
	"payments/pkg/function"
	"payments/pkg/function/services"
	"payments/pkg/outbox"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuerdb"
	"payments/pkg/queue"
	"payments/pkg/store"
)

// New builds the card-worker function: the consumer of the
// issuer-events queue, which applies each notification of the card issuer
// once per its event id, whatever the queue repeats (cards.Service.Apply):
// authorizations decided, settlements, reversals and refunds, their fees,
// terminations; then tells the issuer what each moved on the card: the
// sandbox issuer in sandbox mode, none in production mode, which has no
// issuer adapter yet.
// A message that is not a notification fails, and reaches the dead-letter
// queue after its retries.
func New(ctx context.Context, cfg function.Config) (function.SQSHandler, error) {
	db := services.DB(cfg)
	var iss issuer.Issuer
	if cfg.Mode == function.ModeSandbox {
		iss = issuer.NewSandbox(issuerdb.New(db.DB), nil) // it issues no card
	}
	svc := cards.NewService(cards.Deps{
		Store:   store.NewCards(db),
		Wallets: services.Wallets(db),
		Fees:    fees.NewService(store.NewFees(db)),
		Issuer:  iss,
		Events: outbox.NewPublisher(store.NewOutbox(db),
			queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL)),
	})
	return queue.Batch(func(ctx context.Context, m queue.Message) error {
		n, err := issuer.ParseNotification(m.Body)
		if err != nil {
			return err
		}
		return svc.Apply(ctx, n)
	}), nil
}
