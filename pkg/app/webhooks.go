package app

import (
	"context"

	"payments/pkg/httpapi"
	"payments/pkg/queue"
	"payments/pkg/store"
	"payments/pkg/webhooks"
)

// NewWebhooks builds the webhooks function: the delivery log and resend
// routes under /webhooks, behind the token guard. A resend is queued on the
// webhooks queue.
func NewWebhooks(ctx context.Context, cfg Config) (HTTPHandler, error) {
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	guard, err := tokenGuard(cfg, db)
	if err != nil {
		return nil, err
	}
	q := queueSender(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.WebhooksQueueURL, "WEBHOOKS_QUEUE_URL")
	rt := httpapi.NewRouter(Errors, guard)
	webhooks.Routes(rt, webhooks.NewLog(store.NewWebhooks(db), store.NewCompanies(db), q))
	return lambdaHTTP(rt), nil
}

// webhookSecrets returns the signing-secret service the operator console
// mounts with webhooks.AdminRoutes.
func webhookSecrets(db *store.DB) *webhooks.SigningSecrets {
	return webhooks.NewSigningSecrets(store.NewWebhooks(db))
}
