// Package operatorcallbacks is the operator-callbacks function: POST
// /operator/callbacks/pawapay, which the mobile-money aggregator calls.
package operatorcallbacks

import (
	"context"
	"time"

	"payments/pkg/function"
	"payments/pkg/httpapi"
	"payments/pkg/operatorhooks"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/queue"
)

// New builds the operator-callbacks function: POST
// /operator/callbacks/pawapay, called by the aggregator, so without the
// token guard. A callback whose signature verifies with the aggregator's
// key (OPERATOR_CALLBACK_PUBLIC_KEY) is put on the payouts queue for the
// payout worker; that send is its only effect.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	return NewWithClock(cfg, time.Now)
}

// NewWithClock is New with the clock that signatures' dates are checked
// against.
func NewWithClock(cfg function.Config, now func() time.Time) (function.HTTPHandler, error) {
	h, err := function.OperatorHooks(cfg, queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.PayoutsQueueURL), now)
	if err != nil {
		return nil, err
	}
	return Handler(h), nil
}

// Handler serves h's route as the function does, behind API Gateway.
func Handler(h *operatorhooks.Handler) function.HTTPHandler {
	rt := httpapi.NewRouter(function.Errors, nil)
	operatorhookshttp.Routes(rt, h)
	return function.HTTP(rt)
}
