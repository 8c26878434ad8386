package app

import (
	"context"
	"fmt"

	"payments/pkg/queue"
	"payments/pkg/store"
)

// NewPayoutWorker builds the payout-worker function, the consumer of the
// payouts queue: each message is a payments.Job for one payout or
// collection, handled by payments.Service.HandleJob; failed
// messages are reported one by one (ReportBatchItemFailures). It needs the
// payouts queue, to send itself the next poll, and the operator of cfg's
// mode, so it refuses to start in production mode (see operatorGateway).
func NewPayoutWorker(ctx context.Context, cfg Config) (SQSHandler, error) {
	if cfg.PayoutsQueueURL == "" {
		return nil, fmt.Errorf("%w: PAYOUTS_QUEUE_URL is not set", ErrConfig)
	}
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	gw, err := operatorGateway(cfg, db)
	if err != nil {
		return nil, err
	}
	svc := paymentsService(cfg, db, gw)
	return queue.Batch(func(ctx context.Context, m queue.Message) error {
		return svc.HandleJob(ctx, m.Body)
	}), nil
}
