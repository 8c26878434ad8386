// Package sweeper is the sweeper function, run every minute: it finishes
// the work that a crash or an unavailable upstream left behind.
package sweeper

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/cards"
	"payments/pkg/function"
	"payments/pkg/function/services"
	"payments/pkg/outbox"
	"payments/pkg/payments"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/vault/kmskeys"
)

// New builds the sweeper function, run every minute by a schedule:
// it publishes the outbox events a crash left unpublished
// (outbox.Publisher.Sweep), re-sends the message of every payment the
// payout worker should have handled more than a minute ago
// (payments.Service.Sweep) — it never asks the operator itself: the
// messages it sends do —, and finishes every card movement left open for
// more than a minute, asking the card issuer again (cards.Service.Resume).
func New(ctx context.Context, cfg function.Config) (function.ScheduleHandler, error) {
	return NewWithClock(cfg, time.Now)
}

// NewWithClock is New on the clock now; tests move it forward.
func NewWithClock(cfg function.Config, now func() time.Time) (function.ScheduleHandler, error) {
	db := services.DB(cfg)
	sqsClient := queue.NewClient(cfg.AWS, cfg.SQSEndpoint)
	webhooks := queue.NewPublisher(sqsClient, cfg.WebhooksQueueURL)
	svc := services.Payments(cfg, db, nil, queue.NewPublisher(sqsClient, cfg.PayoutsQueueURL), webhooks)
	svc.Now = now
	pub := outbox.NewPublisher(store.NewOutbox(db), webhooks)
	v, err := services.CardVault(cfg, kmskeys.FromConfig)
	if err != nil {
		return nil, err
	}
	cardSvc := services.Cards(cfg, db, v, webhooks)
	cardSvc.Now = now
	return sweeperHandler(pub, svc, cardSvc, store.NewCards(db), now), nil
}

// cardSweepGrace is how long a card movement may stay open before the
// sweeper finishes it: longer than any request that is still at it.
const cardSweepGrace = time.Minute

// maxCardResumes bounds the card movements one sweep finishes.
const maxCardResumes = 100

// sweeperHandler runs the outbox sweep at now(), the payments sweep (whose
// clock is svc.Now) and the card sweep, each whatever the others did, and
// returns their errors joined.
func sweeperHandler(pub *outbox.Publisher, svc *payments.Service, cardSvc *cards.Service, open cards.Store, now func() time.Time) function.ScheduleHandler {
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
