// Package authapi is the auth function: POST /auth/token.
package authapi

import (
	"context"

	"payments/pkg/auth"
	"payments/pkg/auth/authhttp"
	"payments/pkg/function"
	"payments/pkg/function/services"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/httpapi"
	"payments/pkg/store"
)

// New builds the auth function: POST /auth/token, rate limited per source
// IP in the table.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	db := services.DB(cfg)
	limit := cfg.TokenRateLimit
	if limit <= 0 {
		limit = auth.DefaultRateLimit
	}
	svc, err := tokenkeys.Service(ctx, cfg, db, store.NewRateLimiter(db, "token", limit, auth.RateWindow))
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(function.Errors, nil)
	authhttp.Routes(rt, svc)
	return function.HTTP(rt), nil
}
