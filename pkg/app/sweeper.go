package app

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/cards"
	"payments/pkg/outbox"
	"payments/pkg/payments"
	"payments/pkg/queue"
	"payments/pkg/store"
)

// NewSweeper builds the sweeper function, run every minute by a schedule:
// it publishes the outbox events a crash left unpublished
// (outbox.Publisher.Sweep), re-sends the message of every payment the
// payout worker should have handled more than a minute ago
// (payments.Service.Sweep) — it never asks the operator itself: the
// messages it sends do —, and finishes every card movement left open for
// more than a minute, asking the card issuer again (cards.Service.Resume).
func NewSweeper(ctx context.Context, cfg Config) (ScheduleHandler, error) {
	return newSweeper(cfg, time.Now)
}

// newSweeper is NewSweeper on the clock now; tests move it forward.
func newSweeper(cfg Config, now func() time.Time) (ScheduleHandler, error) {
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	svc := paymentsService(cfg, db, nil)
	svc.Now = now
	pub := outbox.NewPublisher(store.NewOutbox(db),
		queueSender(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL, "WEBHOOKS_QUEUE_URL"))
	cardSvc, err := cardsService(cfg, db)
	if err != nil {
		return nil, err
	}
	cardSvc.Now = now
	return sweeperHandler(pub, svc, cardSvc, store.NewCards(db), now), nil
}

// maxCardResumes bounds the card movements one sweep finishes.
const maxCardResumes = 100

// sweeperHandler runs the outbox sweep at now(), the payments sweep (whose
// clock is svc.Now) and the card sweep, each whatever the others did, and
// returns their errors joined.
func sweeperHandler(pub *outbox.Publisher, svc *payments.Service, cardSvc *cards.Service, open cards.Store, now func() time.Time) ScheduleHandler {
	return func(ctx context.Context, _ events.EventBridgeEvent) error {
		_, errOutbox := pub.Sweep(ctx, now())
		_, errPayments := svc.Sweep(ctx)
		return errors.Join(errOutbox, errPayments, sweepCards(ctx, cardSvc, open, now()))
	}
}

// sweepCards resumes the card movements accepted before now − the grace
// that are still open. An issuer that still cannot answer leaves them for
// the next sweep.
func sweepCards(ctx context.Context, svc *cards.Service, open cards.Store, now time.Time) error {
	txs, err := open.OpenTransactions(ctx, now.Add(-cardSweepGrace), maxCardResumes)
	if err != nil {
		return err
	}
	var errs []error
	for _, tx := range txs {
		if err := svc.Resume(ctx, tx); err != nil && !errors.Is(err, cards.ErrIssuerUnavailable) && !errors.Is(err, cards.ErrChanged) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
