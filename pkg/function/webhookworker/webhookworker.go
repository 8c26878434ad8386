// Package webhookworker is the webhook-worker function, the consumer of
// the webhooks queue.
package webhookworker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/keyvaults"
	"payments/pkg/outbound"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/vault/kmskeys"
	"payments/pkg/webhooks"
)

// New builds the webhook-worker function: the consumer of the
// webhooks queue, which makes one delivery attempt per message and queues
// the next one after a failure. Its outbound client follows DESIGN.md §6;
// loopback receivers are allowed only when OUTBOUND_ALLOW_LOOPBACK=true
// (the local stack), read from the process environment.
func New(ctx context.Context, cfg function.Config) (function.SQSHandler, error) {
	return NewWith(cfg, outbound.New(outbound.WithAllowLoopback(outbound.AllowLoopbackFromEnv())), time.Now)
}

// NewWith is New with the sender and the clock given;
// tests pass a client that trusts their receiver's CA, and a clock they
// can move.
func NewWith(cfg function.Config, sender webhooks.Sender, now func() time.Time) (function.SQSHandler, error) {
	if cfg.WebhooksQueueURL == "" {
		return nil, fmt.Errorf("%w: WEBHOOKS_QUEUE_URL is not set", function.ErrConfig)
	}
	db := base.DB(cfg)
	// The endpoints' secrets are opened under the webhook key.
	v, err := keyvaults.Webhook(cfg, kmskeys.FromConfig)
	if err != nil {
		return nil, err
	}
	q := queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL)
	w := webhooks.NewWorker(store.NewWebhooks(db), sender, q, v, now)
	return concurrentBatch(func(ctx context.Context, m queue.Message) error {
		return w.Handle(ctx, m.Body)
	}), nil
}

// concurrentBatch is queue.Batch with the messages of a batch handled at
// the same time: one webhook attempt may take its whole 10 s time-out, so a
// batch of 10 handled in turn could outlast the function's time-out.
func concurrentBatch(h queue.Handler) function.SQSHandler {
	one := queue.Batch(h)
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		results := make([]events.SQSEventResponse, len(ev.Records))
		var wg sync.WaitGroup
		for i, rec := range ev.Records {
			wg.Go(func() {
				results[i], _ = one(ctx, events.SQSEvent{Records: []events.SQSMessage{rec}})
			})
		}
		wg.Wait()
		var resp events.SQSEventResponse
		for _, r := range results {
			resp.BatchItemFailures = append(resp.BatchItemFailures, r.BatchItemFailures...)
		}
		return resp, nil
	}
}
