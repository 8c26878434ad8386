// Package issuerwebhooks is the issuer-webhooks function: POST
// /issuer/webhooks, which the card issuer calls.
package issuerwebhooks

import (
	"context"
	"time"

	"payments/pkg/companies/companieshttp"
	"payments/pkg/function"
	"payments/pkg/function/issuerreceivers"
	"payments/pkg/httpapi"
	"payments/pkg/issuerhooks/issuerhookshttp"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/queue"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue: the answers to the errors of
// what it links (function.Catalogue).
var Errors = function.Catalogue(issuerhookshttp.Errors, companieshttp.Errors, webhookshttp.Errors, limitshttp.Errors)

// New builds the issuer-webhooks function: POST /issuer/webhooks, which
// the card issuer calls, so without the token guard. A notification signed
// with the issuer's secret is queued as sent on the issuer-events queue, for
// the card-worker; that send is its only effect.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	return NewWithClock(cfg, time.Now)
}

// NewWithClock is New with the clock that signatures' timestamps are
// checked against. In production mode it serves no route (404
// ROUTE_NOT_FOUND): Stripe's events reach the stripe-webhooks function,
// and this format is the sandbox's.
func NewWithClock(cfg function.Config, now func() time.Time) (function.HTTPHandler, error) {
	if cfg.Mode == function.ModeProduction {
		return function.HTTP(httpapi.NewRouter(Errors, nil)), nil
	}
	h, err := issuerreceivers.Notifications(cfg, queue.NewPublisher(queue.NewClient(cfg.AWS, cfg.SQSEndpoint), cfg.IssuerEventsQueueURL), now)
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(Errors, nil)
	issuerhookshttp.Routes(rt, h)
	return function.HTTP(rt), nil
}
