package app

import (
	"context"
	"fmt"
	"time"

	"payments/pkg/auth"
	"payments/pkg/companies"
	"payments/pkg/httpapi"
	"payments/pkg/store"
)

// companyCache is the one company cache of the process. Every token guard
// reads through it and the console's companies.Service forgets a company
// it changes, so where the console and the guards share a process (the
// local dev server, the tests) a rotation or deactivation takes effect at
// once; across Lambda instances it takes at most auth.CompanyCacheTTL.
var companyCache = auth.NewCompanyCache(auth.CompanyCacheTTL, time.Now)

// NewAuth builds the auth function: POST /auth/token, rate limited per
// source IP in the table.
func NewAuth(ctx context.Context, cfg Config) (HTTPHandler, error) {
	db := store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
	limit := cfg.TokenRateLimit
	if limit <= 0 {
		limit = auth.DefaultRateLimit
	}
	svc, err := authService(cfg, db, store.NewRateLimiter(db, "token", limit, auth.RateWindow))
	if err != nil {
		return nil, err
	}
	rt := httpapi.NewRouter(Errors, nil)
	auth.Routes(rt, svc)
	return lambdaHTTP(rt), nil
}

// tokenGuard returns the guard of every company-facing function: it admits
// requests with a valid Bearer token and puts the company id in the request
// context. It fails when cfg has no usable token secret or mode.
func tokenGuard(cfg Config, db *store.DB) (httpapi.Guard, error) {
	svc, err := authService(cfg, db, nil)
	if err != nil {
		return nil, err
	}
	return svc.Guard(), nil
}

// authService returns the token service over db's companies; limiter may be
// nil where no token is issued.
func authService(cfg Config, db *store.DB, limiter auth.RateLimiter) (*auth.Service, error) {
	if len(cfg.TokenSecret) < auth.MinSecretBytes {
		return nil, fmt.Errorf("%w: the token secret (TOKEN_SECRET or TOKEN_SECRET_ARN) must be at least %d bytes", ErrConfig, auth.MinSecretBytes)
	}
	if cfg.Mode == "" {
		return nil, fmt.Errorf("%w: MODE is not set", ErrConfig)
	}
	ttl := cfg.TokenTTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	comps := companies.NewService(store.NewCompanies(db))
	return auth.NewService(auth.Config{Secret: cfg.TokenSecret, Mode: cfg.Mode, TTL: ttl}, comps, limiter, companyCache)
}
