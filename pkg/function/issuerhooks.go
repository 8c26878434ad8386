package function

import (
	"fmt"
	"strings"

	"payments/pkg/issuerhooks"
)

// IssuerHooks returns the handler of the card issuer's notifications,
// checked with the issuer's secret of cfg and queued on issuerEvents: the
// issuer-webhooks function serves it, and the cards function's sandbox card
// network delivers to it in process.
func IssuerHooks(cfg Config, issuerEvents Queue) (*issuerhooks.Handler, error) {
	if err := checkIssuerSecret(cfg); err != nil {
		return nil, err
	}
	return &issuerhooks.Handler{Secret: cfg.IssuerWebhookSecret, Queue: issuerEvents}, nil
}

// IssuerAuthorizations returns the handler of the card network's
// authorization requests, checked with the issuer's secret of cfg and
// decided by d: the issuer-authorizations function serves it, and the
// cards function's sandbox card network asks it in process.
func IssuerAuthorizations(cfg Config, d issuerhooks.Decider) (*issuerhooks.Authorizations, error) {
	if err := checkIssuerSecret(cfg); err != nil {
		return nil, err
	}
	return &issuerhooks.Authorizations{Secret: cfg.IssuerWebhookSecret, Decider: d}, nil
}

// StripeHooks returns the handler of Stripe Issuing's events, checked with
// the issuer's secret of cfg (Stripe's endpoint signing secrets,
// comma-separated), its authorization requests decided by d, its other
// events queued on issuerEvents, what they name by Stripe's ids read by
// lookups: the stripe-webhooks function serves it.
func StripeHooks(cfg Config, d issuerhooks.Decider, issuerEvents Queue, lookups issuerhooks.StripeLookups) (*issuerhooks.Stripe, error) {
	if err := checkIssuerSecret(cfg); err != nil {
		return nil, err
	}
	var secrets []string
	for _, s := range strings.Split(string(cfg.IssuerWebhookSecret), ",") {
		if s = strings.TrimSpace(s); s != "" {
			secrets = append(secrets, s)
		}
	}
	return &issuerhooks.Stripe{Secrets: secrets, Decider: d, Queue: issuerEvents, Lookups: lookups}, nil
}

// checkIssuerSecret checks the issuer's secret of cfg.
func checkIssuerSecret(cfg Config) error {
	if len(cfg.IssuerWebhookSecret) < issuerhooks.MinSecretBytes {
		return fmt.Errorf("%w: the issuer's webhook secret (ISSUER_WEBHOOK_SECRET or ISSUER_WEBHOOK_SECRET_ARN) must be at least %d bytes",
			ErrConfig, issuerhooks.MinSecretBytes)
	}
	return nil
}
