// Package cardissuer builds the real card issuer's adapter of production
// mode, Stripe Issuing (pkg/providers/issuer/stripeissuing), for the
// functions that call it: the cards and customers functions, the sweeper,
// the admin function (its reconciliation), stripe-webhooks and the
// dashboard (a card frozen or unfrozen). It is its
// own package so that no other function links Stripe's library.
package cardissuer

import (
	"fmt"

	"payments/pkg/function"
	"payments/pkg/function/services"
	"payments/pkg/providers"
	"payments/pkg/providers/issuer/stripeissuing"
	"payments/pkg/store"
)

// New returns Stripe Issuing at cfg's ISSUER_BASE_URL with cfg's API key
// in production mode, and nil in sandbox mode, whose issuer is the
// simulated one. A production function without the key does not start
// (function.ConfigFromEnv refuses it first).
func New(cfg function.Config) (*stripeissuing.Client, error) {
	if cfg.Mode != function.ModeProduction {
		return nil, nil
	}
	c, err := stripeissuing.New(stripeissuing.Config{APIKey: cfg.IssuerAPIKey, BaseURL: cfg.IssuerBaseURL})
	if err != nil {
		return nil, fmt.Errorf("%w: the card issuer: %v", function.ErrConfig, err)
	}
	return c, nil
}

// Providers returns the providers of cfg's mode over db
// (services.Providers) with d and the card issuer of the mode (New) as
// d's CardIssuer.
func Providers(cfg function.Config, db *store.DB, d providers.Deps) (providers.Providers, error) {
	c, err := New(cfg)
	if err != nil {
		return providers.Providers{}, err
	}
	if c != nil {
		d.CardIssuer = c
	}
	return services.Providers(cfg, db, d)
}
