// Package issuerauthorizations is the issuer-authorizations function: POST
// /issuer/authorizations, which the card network calls, through the
// issuer, for a decision on each card payment.
package issuerauthorizations

import (
	"context"

	"payments/pkg/function"
	"payments/pkg/function/services"
	"payments/pkg/httpapi"
	"payments/pkg/issuerhooks"
)

// New builds the issuer-authorizations function: POST
// /issuer/authorizations, without the token guard. A request signed with
// the issuer's secret is decided in the request (cards.Service.Decide):
// one read of the card, one conditional write, its events in the outbox.
// It publishes nothing and tells the issuer nothing: the network's advice
// of the outcome, applied by the card-worker, does both.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
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
	issuerhooks.AuthorizationRoutes(rt, a)
	return function.HTTP(rt), nil
}
