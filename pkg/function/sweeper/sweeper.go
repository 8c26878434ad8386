// Package sweeper is the sweeper function, run every minute: it finishes
// the work that a crash, a lost message or an unavailable upstream left
// behind.
package sweeper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"payments/pkg/cards"
	"payments/pkg/correlation"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/cardissuer"
	"payments/pkg/function/issuerreceivers"
	"payments/pkg/function/keyvaults"
	"payments/pkg/function/services"
	"payments/pkg/metrics"
	"payments/pkg/payments"
	"payments/pkg/providers"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/vault/kmskeys"
	"payments/pkg/webhooks"
)

// New builds the sweeper function, run every minute by a schedule. Each
// run has twelve steps, which run at once, each within its own time budget
// and batch, so that one that is slow (a table slow to answer after a
// restart) delays none of the others (docs/operations.md, "The sweeper",
// lists them by the names of the Report):
//
//   - events: publishes the outbox events a crash left unpublished, and
//     again those published whose message the webhook worker never took
//     (outbox.Publisher.Sweep);
//   - webhook_deliveries: queues again the next attempt of every pending
//     webhook delivery that has not moved for a minute: its message was
//     lost (webhooks.Resumer.Sweep);
//   - payments: re-sends the message of every payment the payout worker
//     should have handled more than a minute ago (payments.Service.Sweep),
//     on the payment's queue (a bulk item's to the bulk payouts queue) —
//     it never asks the operator itself: the messages it sends do;
//   - bulk batches: sends again the job of the first chunk not written of
//     every bulk batch accepted more than a minute ago whose payouts are
//     not all written, and completes those whose items are all final
//     (bulk.Service.Sweep);
//   - card movements: finishes every card movement left open for more than
//     a minute, asking the card issuer again (cards.Service.Resume);
//   - fundings: asks the bank about every declared funding still PENDING a
//     minute after its declaration (wallets.Service.SweepFundings); only
//     the sandbox has a bank that answers (in production the console
//     decides).
//   - card holds: releases every hold neither settled nor reversed within
//     cfg.CardHoldExpiry (CARD_HOLD_EXPIRY_SECONDS) of its authorization
//     (cards.Service.ExpireHold);
//   - card terminations: releases, to the USD wallet, the open holds of
//     terminated cards (a termination is one transaction, whatever the
//     card's history: it leaves the holds to this step;
//     cards.Service.FinishTermination);
//   - card network (sandbox mode): the simulated card network delivers
//     again the notifications we have not acknowledged
//     (issuersandbox.Network.Redeliver), as a real network does, and
//     those it kept to deliver later once due (the sandbox issuer's
//     reports of a dispute); in production mode it does nothing;
//   - stale reconciliations: counts the payments flagged for
//     reconciliation that were accepted more than an hour ago
//     (PaymentsAwaitingReconciliationOverAnHour): it changes nothing;
//   - reconciliation: reconciles each provider whose records can be read
//     (the card issuer's statements, the operator's records) when its
//     last run started an hour ago or more, and continues a run that ran
//     out of time (reconcile.Service.RunDue, docs/reconciliation.md).
//   - webhook secrets: seals the webhook signing secrets stored in clear
//     before secrets were sealed, a part of a scan of the table per sweep,
//     until a whole scan finds none (webhooks.SecretSealing).
//
// The card movements step measures those it could not finish
// (CardMovementsOpenPastWindow); both measures are written at every sweep,
// zero included, for the alarms that watch them (docs/operations.md).
//
// It answers a Report of what each step did (done: what it finished, or
// for stale reconciliations what it counted), which it also logs when a
// step did something or failed, and an error when a step failed. Its fee
// schedule cache is its own (base.NewCaches): it lives as long as the
// Lambda instance.
func New(ctx context.Context, cfg function.Config) (function.ScheduleHandler, error) {
	return NewWithClock(cfg, base.NewCaches(time.Now), time.Now)
}

// NewWithClock is New over caches, which pkg/app shares with the other
// functions of its process, on the clock now, which tests move forward.
func NewWithClock(cfg function.Config, caches base.Caches, now func() time.Time) (function.ScheduleHandler, error) {
	db := base.DB(cfg)
	sqsClient := queue.NewClient(cfg.AWS, cfg.SQSEndpoint)
	hooks := queue.NewPublisher(sqsClient, cfg.WebhooksQueueURL)
	pub := services.Events(db, hooks)
	v, err := keyvaults.Card(cfg, kmskeys.FromConfig)
	if err != nil {
		return nil, err
	}
	// Its bank is only asked (Check); its payments service never asks the
	// operator: the messages it sends do. The reconciliation reads the
	// operator's and the card issuer's records.
	p, err := cardissuer.Providers(cfg, db, providers.Deps{Sealer: v})
	if err != nil {
		return nil, err
	}
	bulkJobs := queue.NewPublisher(sqsClient, cfg.BulkPayoutsQueueURL)
	pays, err := services.Payments(cfg, db, p.Operator, queue.NewPublisher(sqsClient, cfg.PayoutsQueueURL), bulkJobs, pub, caches.Fees, now)
	if err != nil {
		return nil, err
	}
	batches, err := services.Bulk(db, pays, bulkJobs, pub, services.PayoutErrors, now)
	if err != nil {
		return nil, err
	}
	cardSvc, err := services.Cards(db, p, v, hooks, nil, caches.Fees, now)
	if err != nil {
		return nil, err
	}
	funds, err := services.Wallets(cfg, db, p, hooks)
	if err != nil {
		return nil, err
	}
	open := moneystore.NewCards(db)
	redeliver := func(context.Context, time.Time) (int, error) { return 0, nil }
	if p.Sandbox {
		hooks, err := issuerreceivers.Notifications(cfg, queue.NewPublisher(sqsClient, cfg.IssuerEventsQueueURL), time.Now)
		if err != nil {
			return nil, err
		}
		n := services.CardNetwork(db, nil, hooks.Deliver, 0)
		redeliver = n.Redeliver
	}
	deliveries := webhooks.NewResumer(store.NewWebhooks(db), hooks)
	webhookVault, err := keyvaults.Webhook(cfg, kmskeys.FromConfig)
	if err != nil {
		return nil, err
	}
	sealing := webhooks.NewSecretSealing(store.NewWebhooks(db), webhookVault)
	rec, err := services.Reconciler(cfg, db, p, cardSvc, now)
	if err != nil {
		return nil, err
	}
	return run(now, []step{
		{"events", func(ctx context.Context, at time.Time) (int, error) { return pub.Sweep(ctx, at) }},
		{"webhook_deliveries", deliveries.Sweep},
		{"payments", func(ctx context.Context, _ time.Time) (int, error) { return pays.Sweep(ctx) }},
		{"bulk_batches", func(ctx context.Context, _ time.Time) (int, error) { return batches.Sweep(ctx) }},
		{"card_movements", func(ctx context.Context, at time.Time) (int, error) { return sweepCards(ctx, cardSvc, open, at) }},
		{"fundings", funds.SweepFundings},
		{"card_holds", func(ctx context.Context, at time.Time) (int, error) {
			return expireHolds(ctx, cardSvc, open, at.Add(-holdExpiry(cfg)))
		}},
		{"card_terminations", func(ctx context.Context, at time.Time) (int, error) {
			return finishTerminations(ctx, cardSvc, open, at)
		}},
		{"card_network", redeliver},
		{"stale_reconciliations", func(ctx context.Context, at time.Time) (int, error) { return staleReconciliations(ctx, pays, at) }},
		{"reconciliation", func(ctx context.Context, _ time.Time) (int, error) { return rec.RunDue(ctx) }},
		{"webhook_secrets", sealing.Sweep},
	}), nil
}

// StepBudget is the longest a step may run, within the function's own
// time: the steps run at once, so each may take nearly all of it.
const StepBudget = 12 * time.Second

// stepMargin is the time kept, after every step's deadline, to answer
// before the function's own deadline.
const stepMargin = time.Second

// step is one step of a sweep: it does its work at the time given and
// returns how many things it finished.
type step struct {
	name string
	do   func(ctx context.Context, now time.Time) (int, error)
}

// safely runs the step, a panic being its error: a step runs on a
// goroutine of its own, where a panic would end the whole process.
func (s step) safely(ctx context.Context, now time.Time) (n int, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sweeper: step %s panicked: %v", s.name, p)
		}
	}()
	return s.do(ctx, now)
}

// Report is what one sweep did, step by step: how many events it
// published, payments it resumed, card movements it finished and fundings
// it decided, and each step's error (its text, for the operators who read
// the function's logs or `make invoke`'s output).
type Report map[string]Outcome

// Outcome is what one step did.
type Outcome struct {
	Done  int    `json:"done"`
	Error string `json:"error,omitempty"`
}

// run returns the handler that runs steps at now(), each on its own
// goroutine with its own deadline: StepBudget, or less when the
// invocation's deadline comes earlier.
func run(now func() time.Time, steps []step) function.ScheduleHandler {
	return func(ctx context.Context, ev events.EventBridgeEvent) (any, error) {
		// What a sweep starts (an event published, a payment's message
		// sent again) logs under the schedule event's id, unless it is a
		// payment's, which keeps its own.
		ctx = correlation.NewContext(ctx, ev.ID)
		at := now()
		budget := StepBudget
		if dl, ok := ctx.Deadline(); ok {
			left := time.Until(dl)
			budget = min(budget, left-stepMargin)
			if budget <= 0 {
				budget = left // too little time to keep a margin: all of it
			}
		}
		report := Report{}
		errs := make([]error, len(steps))
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i, s := range steps {
			wg.Go(func() {
				sctx, cancel := context.WithTimeout(ctx, budget)
				defer cancel()
				n, err := s.safely(sctx, at)
				o := Outcome{Done: n}
				if err != nil {
					o.Error = err.Error()
					errs[i] = err
					slog.ErrorContext(ctx, "sweep step failed", "step", s.name, "done", n, "error", err)
				}
				mu.Lock()
				report[s.name] = o
				mu.Unlock()
			})
		}
		wg.Wait()
		var args []any
		for _, s := range steps {
			if o := report[s.name]; o.Done > 0 {
				args = append(args, s.name, o.Done)
			}
		}
		if len(args) > 0 {
			slog.InfoContext(ctx, "swept", args...)
		}
		return report, errors.Join(errs...)
	}
}

// cardSweepGrace is how long a card movement may stay open before the
// sweeper finishes it: longer than any request that is still at it.
const cardSweepGrace = time.Minute

// maxCardResumes bounds the card movements one sweep finishes.
const maxCardResumes = 100

// sweepCards resumes the card movements accepted before now − the grace
// that are still open, and returns how many it finished. An issuer that
// still cannot answer leaves them for the next sweep.
func sweepCards(ctx context.Context, svc *cards.Service, st cards.Store, now time.Time) (int, error) {
	txs, err := st.OpenTransactions(ctx, now.Add(-cardSweepGrace), maxCardResumes)
	if err != nil {
		return 0, err
	}
	done := 0
	var errs []error
	open := 0 // still open after this sweep: not finished, by it or by another
	for _, tx := range txs {
		switch err := svc.Resume(ctx, tx); {
		case err == nil:
			done++
		case errors.Is(err, cards.ErrChanged):
		case errors.Is(err, cards.ErrIssuerUnavailable):
			open++
		default:
			open++
			errs = append(errs, err)
		}
	}
	metrics.Gauge(ctx, metrics.CardMovementsOpenPastWindow, open)
	return done, errors.Join(errs...)
}

// reconciliationAge is how long a payment may wait for reconciliation
// before the sweeper's measure counts it.
const reconciliationAge = time.Hour

// maxStaleReconciliations bounds the count of one sweep.
const maxStaleReconciliations = 1000

// staleReconciliations measures, and returns, the number of payments
// flagged for reconciliation accepted more than reconciliationAge before
// now (at most maxStaleReconciliations).
func staleReconciliations(ctx context.Context, pays *payments.Service, now time.Time) (int, error) {
	n, err := pays.FlaggedBefore(ctx, now.Add(-reconciliationAge), maxStaleReconciliations)
	if err != nil {
		return 0, err
	}
	metrics.Gauge(ctx, metrics.PaymentsAwaitingReconciliationOverAnHour, n)
	return n, nil
}

// maxHoldExpiries bounds the holds one sweep expires; the next sweep takes
// the rest.
const maxHoldExpiries = 100

// holdExpiry is how long a hold may stay open: cfg's, or
// cards.DefaultHoldExpiry when cfg does not say.
func holdExpiry(cfg function.Config) time.Duration {
	if cfg.CardHoldExpiry > 0 {
		return cfg.CardHoldExpiry
	}
	return cards.DefaultHoldExpiry
}

// expireHolds releases the holds of the authorizations created before
// cutoff that are still open, and returns how many it released. A hold
// still contended after the retries is left for the next sweep.
func expireHolds(ctx context.Context, svc *cards.Service, open cards.Store, cutoff time.Time) (int, error) {
	holds, err := open.HoldsBefore(ctx, cutoff, maxHoldExpiries)
	if err != nil {
		return 0, err
	}
	done := 0
	var errs []error
	for _, h := range holds {
		expired, err := svc.ExpireHold(ctx, h)
		switch {
		case expired:
			done++
		case err != nil && !errors.Is(err, cards.ErrChanged) && !errors.Is(err, cards.ErrIssuerUnavailable):
			errs = append(errs, err)
		}
	}
	return done, errors.Join(errs...)
}

// maxTerminations bounds the terminated cards one sweep reads; the next
// sweep takes the rest.
const maxTerminations = 100

// finishTerminations releases the open holds of the cards terminated
// before now that still keep money for them, oldest first, within the
// step's budget, and returns how many holds it released: what the budget
// leaves is the next sweep's, which finds the cards again in the index.
func finishTerminations(ctx context.Context, svc *cards.Service, open cards.Store, now time.Time) (int, error) {
	due, err := open.Terminating(ctx, now, maxTerminations)
	if err != nil {
		return 0, err
	}
	done := 0
	var errs []error
	for _, c := range due {
		n, err := svc.FinishTermination(ctx, c.CompanyID, c.ID)
		done += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return done, errors.Join(errs...)
}
