// Package webhooksapi is the webhooks function: the endpoints, the
// delivery log and resends under /webhooks, and the Events API under
// /events.
package webhooksapi

import (
	"context"
	"time"

	"payments/pkg/auth/authhttp"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/companyroutes"
	"payments/pkg/function/keyvaults"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/outbound"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/vault/kmskeys"
	"payments/pkg/webhooks"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue: the answers to the errors of
// what it links (function.Catalogue).
var Errors = function.Catalogue(webhookshttp.Errors, companieshttp.Errors, authhttp.Errors, limitshttp.Errors, idempotencyhttp.Errors, feeshttp.Errors)

// New builds the webhooks function: the endpoints, the delivery log and
// resend routes under /webhooks and the Events API under /events, behind
// the token guard. A resend is queued on the webhooks queue.
//
// Its caches are its own (base.NewCaches): they live as long as the
// Lambda instance.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	return NewWith(ctx, cfg, base.NewCaches(time.Now))
}

// NewWith is New over caches, which pkg/app shares with the other
// functions of its process.
func NewWith(ctx context.Context, cfg function.Config, caches base.Caches) (function.HTTPHandler, error) {
	db := base.DB(cfg)
	guard, err := tokenkeys.Guard(ctx, cfg, db, caches.Companies)
	if err != nil {
		return nil, err
	}
	rt, err := companyroutes.Router(cfg, guard, db, Errors)
	if err != nil {
		return nil, err
	}
	// The endpoints' secrets are sealed under the webhook key.
	v, err := keyvaults.Webhook(cfg, kmskeys.FromConfig)
	if err != nil {
		return nil, err
	}
	q := queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL)
	wh := store.NewWebhooks(db)
	webhookshttp.Routes(rt, webhooks.NewLog(wh, q))
	webhookshttp.EndpointRoutes(rt, webhooks.NewEndpoints(wh, v, outbound.AllowLoopbackFromEnv(), nil))
	return function.HTTP(rt), nil
}
