package function

import (
	"fmt"

	"payments/pkg/issuerhooks"
)

// IssuerHooks returns the handler of the card issuer's notifications,
// checked with the issuer's secret of cfg and queued on issuerEvents: the
// issuer-webhooks function serves it, and the cards function's sandbox card
// network delivers to it in process.
func IssuerHooks(cfg Config, issuerEvents Queue) (*issuerhooks.Handler, error) {
	if len(cfg.IssuerWebhookSecret) < issuerhooks.MinSecretBytes {
		return nil, fmt.Errorf("%w: the issuer's webhook secret (ISSUER_WEBHOOK_SECRET or ISSUER_WEBHOOK_SECRET_ARN) must be at least %d bytes",
			ErrConfig, issuerhooks.MinSecretBytes)
	}
	return &issuerhooks.Handler{Secret: cfg.IssuerWebhookSecret, Queue: issuerEvents}, nil
}
