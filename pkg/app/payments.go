package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"payments/pkg/cache"
	"payments/pkg/fees"
	"payments/pkg/httpapi"
	"payments/pkg/outbox"
	"payments/pkg/payments"
	"payments/pkg/providers/operator"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/wallets"
)

// NewPayments builds the payments function behind the token guard:
// GET /payment/balance, POST /payment/payout, POST /payment/collect,
// GET /payment/transactions, GET /payment/transactions/{transactionId}/status
// and GET /payment/guideline. In production mode, which has no operator
// adapter yet (see operatorGateway), it serves the reads and refuses new
// payouts and collections with 503 before anything is written. Payouts and
// collections take an Idempotency-Key (idempotentRoutes).
func NewPayments(ctx context.Context, cfg Config) (HTTPHandler, error) {
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	guard, err := tokenGuard(cfg, db)
	if err != nil {
		return nil, err
	}
	gw, err := operatorGateway(cfg, db)
	if err != nil {
		slog.Warn("payments without an operator: payouts and collections are refused", "error", err)
		gw = nil
	}
	rt := httpapi.NewRouter(Errors, guard)
	rt.Use(idempotent(db))
	wallets.PaymentRoutes(rt, walletsService(db))
	jobs := queueSender(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.PayoutsQueueURL, "PAYOUTS_QUEUE_URL")
	payments.Routes(rt, payments.NewService(payments.Deps{
		Store:    store.NewPayments(db),
		Wallets:  store.NewWallets(db),
		Fees:     fees.NewService(fees.CachedStore(store.NewFees(db), feeCache)),
		Gateway:  gw,
		Jobs:     jobs,
		Events:   payments.Relay(jobs), // the payout worker publishes them
		Deadline: cfg.PaymentDeadline,
	}))
	return lambdaHTTP(rt), nil
}

// feeCache is the one fee schedule cache of the process: the payments
// function reads schedules through it and the console's fees.Service
// forgets a schedule it replaces, as companyCache does for companies.
var feeCache = cache.New[fees.Schedule](cache.Staleness, time.Now)

// operatorGateway returns the mobile-money operator of cfg's mode: the
// simulated sandbox operator, keeping its orders in db apart from ours, in
// sandbox mode. Production mode needs a real aggregator adapter (an
// operator.Gateway), which does not exist yet, so it is a configuration
// error rather than a silent sandbox.
func operatorGateway(cfg Config, db *store.DB) (operator.Gateway, error) {
	if cfg.Mode == ModeSandbox {
		return operator.NewSandbox(store.NewSandboxOperator(db)), nil
	}
	return nil, fmt.Errorf("%w: MODE %q needs a real operator adapter (operator.Gateway) and none is configured; "+
		"only MODE=%s (the sandbox operator) can process payments", ErrConfig, cfg.Mode, ModeSandbox)
}

// paymentsService returns the payments service of the payout worker and
// the sweeper over db: the payouts queue carries its jobs, events are
// published to the webhooks queue, and gw is the operator (nil for a caller
// that never asks it).
func paymentsService(cfg Config, db *store.DB, gw operator.Gateway) *payments.Service {
	sqsClient := queue.NewClient(cfg.AWS, cfg.SQSEndpoint)
	return payments.NewService(payments.Deps{
		Store:    store.NewPayments(db),
		Wallets:  store.NewWallets(db),
		Fees:     fees.NewService(store.NewFees(db)),
		Gateway:  gw,
		Jobs:     queueSender(sqsClient, cfg.PayoutsQueueURL, "PAYOUTS_QUEUE_URL"),
		Events:   outbox.NewPublisher(store.NewOutbox(db), queueSender(sqsClient, cfg.WebhooksQueueURL, "WEBHOOKS_QUEUE_URL")),
		Deadline: cfg.PaymentDeadline,
	})
}

// sender sends messages to one queue.
type sender interface {
	Send(ctx context.Context, body []byte, delay time.Duration) error
}

// queueSender returns a sender for the queue at url. ConfigFromEnv refuses
// to start a function without the queues it uses (Functions); in a Config
// built by hand without url, every send fails with a configuration error,
// which callers log: accepted payments are then submitted by the sweeper,
// events published by it.
func queueSender(client *sqs.Client, url, variable string) sender {
	if url == "" {
		slog.Warn("queue not configured: sends will fail", "variable", variable)
		return missingQueue(variable)
	}
	return queue.NewPublisher(client, url)
}

// missingQueue is the sender of a queue whose URL variable is not set.
type missingQueue string

// Send fails with ErrConfig.
func (m missingQueue) Send(context.Context, []byte, time.Duration) error {
	return fmt.Errorf("%w: %s is not set", ErrConfig, string(m))
}
