// Package authapi is the auth function: POST /auth/token.
package authapi

import (
	"context"
	"time"

	"payments/pkg/auth"
	"payments/pkg/auth/authhttp"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/store"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue: the answers to the errors of
// what it links (function.Catalogue).
var Errors = function.Catalogue(authhttp.Errors, companieshttp.Errors, limitshttp.Errors, webhookshttp.Errors, feeshttp.Errors, idempotencyhttp.Errors)

// New builds the auth function: POST /auth/token, rate limited per source
// IP in the table. Its company cache is its own (base.NewCaches): it
// lives as long as the Lambda instance.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	return NewWith(ctx, cfg, base.NewCaches(time.Now))
}

// NewWith is New over caches, which pkg/app shares with the other
// functions of its process.
func NewWith(ctx context.Context, cfg function.Config, caches base.Caches) (function.HTTPHandler, error) {
	db := base.DB(cfg)
	limit := cfg.TokenRateLimit
	if limit <= 0 {
		limit = auth.DefaultRateLimit
	}
	svc, err := tokenkeys.Service(ctx, cfg, db, store.NewRateLimiter(db, "token", limit, auth.RateWindow), caches.Companies)
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(Errors, nil)
	authhttp.Routes(rt, svc)
	return function.HTTP(rt), nil
}
