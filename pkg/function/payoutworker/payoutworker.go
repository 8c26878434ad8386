// Package payoutworker is the payout-worker function, the consumer of the
// payouts queue.
package payoutworker

import (
	"context"
	"fmt"
	"log/slog"

	"payments/pkg/bulk"
	"payments/pkg/function"
	"payments/pkg/function/services"
	"payments/pkg/providers"
	"payments/pkg/queue"
)

// New builds the payout-worker function, the consumer of the payouts
// queue: each message is a payments.Job for one payout or collection,
// handled by payments.Service.HandleJob, or a bulk.ChunkJob, the writing
// of a chunk of a bulk batch's payouts (bulk.Service.HandleChunk); failed messages are reported one
// by one (ReportBatchItemFailures). It needs the payouts queue, to send
// itself the next poll, and the operator of cfg's mode: the sandbox
// operator, or in production mode the aggregator's adapter, without which
// it refuses to start (services.Operator).
func New(ctx context.Context, cfg function.Config) (function.SQSHandler, error) {
	if cfg.PayoutsQueueURL == "" {
		return nil, fmt.Errorf("%w: PAYOUTS_QUEUE_URL is not set", function.ErrConfig)
	}
	db := services.DB(cfg)
	p, err := services.Providers(cfg, db, providers.Deps{})
	if err != nil {
		return nil, err
	}
	gw, err := services.Operator(cfg, p)
	if err != nil {
		return nil, err
	}
	sqsClient := queue.NewClient(cfg.AWS, cfg.SQSEndpoint)
	svc, err := services.Payments(cfg, db, gw, queue.NewPublisher(sqsClient, cfg.PayoutsQueueURL),
		services.Events(db, queue.NewPublisher(sqsClient, cfg.WebhooksQueueURL)))
	if err != nil {
		return nil, err
	}
	batches, err := services.Bulk(db, svc, queue.NewPublisher(sqsClient, cfg.PayoutsQueueURL),
		services.Events(db, queue.NewPublisher(sqsClient, cfg.WebhooksQueueURL)))
	if err != nil {
		return nil, err
	}
	return queue.Batch(func(ctx context.Context, m queue.Message) error {
		j, isChunk, err := bulk.ParseChunkJob(m.Body)
		switch {
		case err != nil:
			slog.ErrorContext(ctx, "drop malformed chunk job", "error", err)
			return nil
		case isChunk:
			return batches.HandleChunk(ctx, j)
		}
		return svc.HandleJob(ctx, m.Body)
	}), nil
}
