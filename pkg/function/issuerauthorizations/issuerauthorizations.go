// Package issuerauthorizations is the issuer-authorizations function: POST
// /issuer/authorizations, which the card network calls, through the
// issuer, for a decision on each card payment.
package issuerauthorizations

import (
	"context"

	"payments/pkg/function"
	"payments/pkg/function/services"
	"payments/pkg/httpapi"
	"payments/pkg/issuerhooks/issuerhookshttp"
)

// New builds the issuer-authorizations function: POST
// /issuer/authorizations, without the token guard. A request signed with
// the issuer's secret is decided in the request (cards.Service.Decide):
// one read of the card, one conditional write, its events in the outbox.
// It publishes nothing and tells the issuer nothing: the network's advice
// of the outcome, applied by the card-worker, does both. In production mode
// it serves no route (404 ROUTE_NOT_FOUND): Stripe's authorization requests
// reach the stripe-webhooks function, and this format is the sandbox's.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	if cfg.Mode == function.ModeProduction {
		return function.HTTP(httpapi.NewRouter(function.Errors, nil)), nil
	}
	db := services.DB(cfg)
	d, err := services.CardDecider(db)
	if err != nil {
		return nil, err
	}
	a, err := function.IssuerAuthorizations(cfg, d)
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(function.Errors, nil)
	issuerhookshttp.AuthorizationRoutes(rt, a)
	return function.HTTP(rt), nil
}
