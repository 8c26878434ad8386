package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/outbox"
	"payments/pkg/payments"
	"payments/pkg/queue"
	"payments/pkg/store"
)

// NewSweeper builds the sweeper function, run every minute by a schedule:
// it publishes the outbox events a crash left unpublished
// (outbox.Publisher.Sweep), re-sends the submit message of payments still
// PENDING after a minute, and expires payments still not final 15 minutes
// after acceptance (payments.Service.Sweep). In production mode, without an
// operator adapter, it still runs; expiring payments then skips the last
// question to the operator.
func NewSweeper(ctx context.Context, cfg Config) (ScheduleHandler, error) {
	return newSweeper(cfg, time.Now), nil
}

// newSweeper is NewSweeper on the clock now; tests move it forward.
func newSweeper(cfg Config, now func() time.Time) ScheduleHandler {
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	gw, err := operatorGateway(cfg)
	if err != nil {
		slog.Warn("sweeper without an operator: expired payments are not checked with it", "error", err)
		gw = nil
	}
	svc := paymentsService(cfg, db, gw)
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
