// Package webhooksapi is the webhooks function: the endpoints, the
// delivery log and resends under /webhooks, and the Events API under
// /events.
package webhooksapi

import (
	"context"

	"payments/pkg/function"
	"payments/pkg/function/services"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/outbound"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/vault/kmskeys"
	"payments/pkg/webhooks"
	"payments/pkg/webhooks/webhookshttp"
)

// New builds the webhooks function: the endpoints, the delivery log and
// resend routes under /webhooks and the Events API under /events, behind
// the token guard. A resend is queued on the webhooks queue.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	db := services.DB(cfg)
	guard, err := tokenkeys.Guard(ctx, cfg, db)
	if err != nil {
		return nil, err
	}
	rt, err := services.CompanyRouter(cfg, guard, db)
	if err != nil {
		return nil, err
	}
	// The endpoints' secrets are sealed under the webhook key.
	v, err := services.WebhookVault(cfg, kmskeys.FromConfig)
	if err != nil {
		return nil, err
	}
	q := queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL)
	wh := store.NewWebhooks(db)
	webhookshttp.Routes(rt, webhooks.NewLog(wh, q))
	webhookshttp.EndpointRoutes(rt, webhooks.NewEndpoints(wh, v, outbound.AllowLoopbackFromEnv()))
	return function.HTTP(rt), nil
}
