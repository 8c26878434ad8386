package app

import (
	"context"

	"payments/pkg/cards"
	"payments/pkg/fees"
	"payments/pkg/outbox"
	"payments/pkg/providers/issuer"
	"payments/pkg/queue"
	"payments/pkg/store"
)

// NewCardWorker builds the card-worker function: the consumer of the
// issuer-events queue, which applies each notification of the card issuer
// once per its event id, whatever the queue repeats (cards.Service.Apply):
// authorizations decided, settlements, reversals and refunds, their fees,
// terminations.
// A message that is not a notification fails, and reaches the dead-letter
// queue after its retries.
func NewCardWorker(ctx context.Context, cfg Config) (SQSHandler, error) {
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	svc := cards.NewService(cards.Deps{
		Store:   store.NewCards(db),
		Wallets: walletsService(db),
		Fees:    fees.NewService(store.NewFees(db)),
		Events: outbox.NewPublisher(store.NewOutbox(db),
			queueSender(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL, "WEBHOOKS_QUEUE_URL")),
	})
	return queue.Batch(func(ctx context.Context, m queue.Message) error {
		n, err := issuer.ParseNotification(m.Body)
		if err != nil {
			return err
		}
		return svc.Apply(ctx, n)
	}), nil
}
