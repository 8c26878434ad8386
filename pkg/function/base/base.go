// Package base builds what every function stands on, whatever it serves:
// the table (DB), the function's caches (Caches) and the token service and
// guard over them (Auth, TokenGuard). It links no domain of money, so that
// a function that keeps none (auth) links none; pkg/function/services,
// which builds the domains' services, builds on it.
package base

import (
	"crypto/ecdsa"
	"fmt"
	"time"

	"payments/pkg/auth"
	"payments/pkg/auth/authhttp"
	"payments/pkg/companies"
	"payments/pkg/function"
	"payments/pkg/httpapi"
	"payments/pkg/store"
)

// DB returns the table of cfg through a new DynamoDB client: a function
// calls it once.
func DB(cfg function.Config) *store.DB {
	return store.New(store.NewClient(cfg.AWS, cfg.DynamoDBEndpoint), cfg.TableName)
}

// TokenKeys are the token keys of a function (pkg/function/tokenkeys
// loads them): the signer, the auth function's alone, and the public keys
// accepted besides its own.
type TokenKeys struct {
	Signer   auth.Signer
	Accepted []*ecdsa.PublicKey
}

// TokenGuard returns the guard of every company-facing function: it admits
// requests with a valid Bearer token and puts the company id in the request
// context, reading companies through companyCache (the function's,
// Caches.Companies). It fails when cfg has no mode or keys has no key.
func TokenGuard(cfg function.Config, keys TokenKeys, db *store.DB, companyCache *auth.CompanyCache) (httpapi.Guard, error) {
	svc, err := Auth(cfg, keys, db, nil, companyCache)
	if err != nil {
		return nil, err
	}
	return authhttp.Guard(svc), nil
}

// Auth returns the token service over db's companies, read through
// companyCache (the function's, Caches.Companies), signing with keys'
// Signer when it has one; limiter may be nil where no token is issued.
func Auth(cfg function.Config, keys TokenKeys, db *store.DB, limiter auth.RateLimiter, companyCache *auth.CompanyCache) (*auth.Service, error) {
	if cfg.Mode == "" {
		return nil, fmt.Errorf("%w: MODE is not set", function.ErrConfig)
	}
	ttl := cfg.TokenTTL
	if ttl <= 0 {
		ttl = time.Hour
	}
	comps := companies.NewService(store.NewCompanies(db), nil)
	svc, err := auth.NewService(auth.Config{Signer: keys.Signer, Keys: keys.Accepted, Issuer: cfg.TokenIssuer, Mode: cfg.Mode, TTL: ttl},
		comps, limiter, companyCache)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", function.ErrConfig, err)
	}
	return svc, nil
}
