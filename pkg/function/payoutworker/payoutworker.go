// Package payoutworker is the payout-worker function, the consumer of the
// payouts queue and of the bulk payouts queue.
package payoutworker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/bulk"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/services"
	"payments/pkg/providers"
	"payments/pkg/queue"
)

// New builds the payout-worker function, the consumer of two queues, each
// by an event source mapping of its own: the payouts queue and the bulk
// payouts queue, whose mapping's MaximumConcurrency bounds the bulk
// batches' share of the function (docs/bulk.md). Each message, from either
// queue, is a payments.Job for one payout or collection, handled by
// payments.Service.HandleJob, or a bulk.ChunkJob, the writing of a chunk of
// a bulk batch's payouts (bulk.Service.HandleChunk); failed messages are
// reported one by one (ReportBatchItemFailures). It sends to both queues:
// a payment's next poll goes to the queue of its kind (the bulk payouts
// queue for a batch's item), and a batch's next chunk job to the bulk
// payouts queue. It needs the operator of cfg's mode: the sandbox
// operator, or in production mode the aggregator's adapter, without which
// it refuses to start (services.Operator). Its fee schedule cache is its
// own (base.NewCaches): it lives as long as the Lambda instance.
func New(ctx context.Context, cfg function.Config) (function.SQSHandler, error) {
	return NewWithClock(cfg, base.NewCaches(time.Now), time.Now)
}

// NewWithClock is New over caches, which pkg/app shares with the other
// functions of its process, on the clock now, which tests move forward.
func NewWithClock(cfg function.Config, caches base.Caches, now func() time.Time) (function.SQSHandler, error) {
	switch {
	case cfg.PayoutsQueueURL == "":
		return nil, fmt.Errorf("%w: PAYOUTS_QUEUE_URL is not set", function.ErrConfig)
	case cfg.BulkPayoutsQueueURL == "":
		return nil, fmt.Errorf("%w: BULK_PAYOUTS_QUEUE_URL is not set", function.ErrConfig)
	}
	db := base.DB(cfg)
	p, err := services.Providers(cfg, db, providers.Deps{})
	if err != nil {
		return nil, err
	}
	gw, err := services.Operator(cfg, p)
	if err != nil {
		return nil, err
	}
	sqsClient := queue.NewClient(cfg.AWS, cfg.SQSEndpoint)
	payouts, bulkJobs := queue.NewPublisher(sqsClient, cfg.PayoutsQueueURL), queue.NewPublisher(sqsClient, cfg.BulkPayoutsQueueURL)
	events := services.Events(db, queue.NewPublisher(sqsClient, cfg.WebhooksQueueURL))
	svc, err := services.Payments(cfg, db, gw, payouts, bulkJobs, events, caches.Fees, now)
	if err != nil {
		return nil, err
	}
	batches, err := services.Bulk(db, svc, bulkJobs, events, services.PayoutErrors, now)
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
