package app

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/outbox"
	"payments/pkg/payments"
	"payments/pkg/queue"
	"payments/pkg/store"
)

// NewSweeper builds the sweeper function, run every minute by a schedule:
// it publishes the outbox events a crash left unpublished
// (outbox.Publisher.Sweep) and re-sends the message of every payment the
// payout worker should have handled more than a minute ago
// (payments.Service.Sweep). It never asks the operator itself: the
// messages it sends do.
func NewSweeper(ctx context.Context, cfg Config) (ScheduleHandler, error) {
	return newSweeper(cfg, time.Now), nil
}

// newSweeper is NewSweeper on the clock now; tests move it forward.
func newSweeper(cfg Config, now func() time.Time) ScheduleHandler {
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	svc := paymentsService(cfg, db, nil)
	svc.Now = now
	pub := outbox.NewPublisher(store.NewOutbox(db),
		queueSender(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL, "WEBHOOKS_QUEUE_URL"))
	return sweeperHandler(pub, svc, now)
}

// sweeperHandler runs the outbox sweep at now() and the payments sweep
// (whose clock is svc.Now), both whatever the other did, and returns their
// errors joined.
func sweeperHandler(pub *outbox.Publisher, svc *payments.Service, now func() time.Time) ScheduleHandler {
	return func(ctx context.Context, _ events.EventBridgeEvent) error {
		_, errOutbox := pub.Sweep(ctx, now())
		_, errPayments := svc.Sweep(ctx)
		return errors.Join(errOutbox, errPayments)
	}
}
