// Package issuerreceivers builds, from a function's configuration, the
// receivers of the card issuer's calls: its notifications, its
// authorization requests and Stripe Issuing's events, each checked with the
// issuer's secret.
package issuerreceivers

import (
	"fmt"
	"strings"
	"time"

	"payments/pkg/function"
	"payments/pkg/issuerhooks"
)

// Notifications returns the handler of the card issuer's notifications,
// checked with the issuer's secret of cfg (signatures' timestamps against
// now) and queued on issuerEvents: the
// issuer-webhooks function serves it, and the cards function's sandbox card
// network delivers to it in process.
func Notifications(cfg function.Config, issuerEvents function.Queue, now func() time.Time) (*issuerhooks.Handler, error) {
	if err := checkSecret(cfg); err != nil {
		return nil, err
	}
	return &issuerhooks.Handler{Secret: cfg.IssuerWebhookSecret, Queue: issuerEvents, Now: now}, nil
}

// Authorizations returns the handler of the card network's
// authorization requests, checked with the issuer's secret of cfg and
// decided by d: the issuer-authorizations function serves it, and the
// cards function's sandbox card network asks it in process.
func Authorizations(cfg function.Config, d issuerhooks.Decider) (*issuerhooks.Authorizations, error) {
	if err := checkSecret(cfg); err != nil {
		return nil, err
	}
	return &issuerhooks.Authorizations{Secret: cfg.IssuerWebhookSecret, Decider: d}, nil
}

// Stripe returns the handler of Stripe Issuing's events, checked with
// the issuer's secret of cfg (Stripe's endpoint signing secrets,
// comma-separated), its authorization requests decided by d, its other
// events queued on issuerEvents, what they name by Stripe's ids read by
// lookups: the stripe-webhooks function serves it.
func Stripe(cfg function.Config, d issuerhooks.Decider, issuerEvents function.Queue, lookups issuerhooks.StripeLookups) (*issuerhooks.Stripe, error) {
	if err := checkSecret(cfg); err != nil {
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

// checkSecret checks the issuer's secret of cfg.
func checkSecret(cfg function.Config) error {
	if len(cfg.IssuerWebhookSecret) < issuerhooks.MinSecretBytes {
		return fmt.Errorf("%w: the issuer's webhook secret (ISSUER_WEBHOOK_SECRET or ISSUER_WEBHOOK_SECRET_ARN) must be at least %d bytes",
			function.ErrConfig, issuerhooks.MinSecretBytes)
	}
	return nil
}
