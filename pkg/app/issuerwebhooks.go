package app

import (
	"context"
	"fmt"
	"time"

	"payments/pkg/httpapi"
	"payments/pkg/issuerhooks"
	"payments/pkg/queue"
)

// NewIssuerWebhooks builds the issuer-webhooks function: POST
// /issuer/webhooks, which the card issuer calls, so without the token
// guard. A notification signed with the issuer's secret is queued as sent
// on the issuer-events queue, for the card-worker; that send is its only
// effect.
func NewIssuerWebhooks(ctx context.Context, cfg Config) (HTTPHandler, error) {
	return newIssuerWebhooks(cfg, time.Now)
}

// newIssuerWebhooks is NewIssuerWebhooks with the clock that signatures'
// timestamps are checked against.
func newIssuerWebhooks(cfg Config, now func() time.Time) (HTTPHandler, error) {
	h, err := issuerHooks(cfg)
	if err != nil {
		return nil, err
	}
	h.Now = now
	rt := httpapi.NewRouter(Errors, nil)
	issuerhooks.Routes(rt, h)
	return lambdaHTTP(rt), nil
}

// issuerHooks returns the handler of the issuer's notifications: checked
// with the issuer's secret of cfg, queued on its issuer-events queue.
func issuerHooks(cfg Config) (*issuerhooks.Handler, error) {
	if len(cfg.IssuerWebhookSecret) < issuerhooks.MinSecretBytes {
		return nil, fmt.Errorf("%w: the issuer's webhook secret (ISSUER_WEBHOOK_SECRET or ISSUER_WEBHOOK_SECRET_ARN) must be at least %d bytes",
			ErrConfig, issuerhooks.MinSecretBytes)
	}
	q := queueSender(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.IssuerEventsQueueURL, "ISSUER_EVENTS_QUEUE_URL")
	return &issuerhooks.Handler{Secret: cfg.IssuerWebhookSecret, Queue: q}, nil
}
