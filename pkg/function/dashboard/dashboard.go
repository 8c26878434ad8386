// Package dashboard is the dashboard function: the company dashboard's
// pages under /dashboard (pkg/dashboard), over the user pool, the
// sessions' records in the table and the wallets service the API uses
// (services.Balances).
package dashboard

import (
	"context"
	"errors"
	"net/http"
	"time"

	"payments/pkg/auth/authhttp"
	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/customers/customershttp"
	"payments/pkg/dashboard"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/services"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/identity"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/reconcile/reconcilehttp"
	"payments/pkg/sessions"
	"payments/pkg/store"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks/webhookshttp"
)

// Errors is the function's error catalogue, function.Catalogue of the
// catalogues of the domains it links, as the API's functions declare
// theirs. The pages show their own sentences, never a catalogue's;
// function.HTTP answers with it an event it cannot read.
var Errors = function.Catalogue(walletshttp.Errors, fxhttp.Errors, feeshttp.Errors, debtshttp.Errors, paymentshttp.Errors, companieshttp.Errors, authhttp.Errors, limitshttp.Errors, idempotencyhttp.Errors, bulkhttp.Errors, cardshttp.Errors, customershttp.Errors, webhookshttp.Errors, operatorhookshttp.Errors, reconcilehttp.Errors)

// New builds the dashboard function over NoPool: signing in is refused,
// as unavailable, until the wiring is given the user pool's adapter.
func New(ctx context.Context, cfg function.Config) (function.HTTPHandler, error) {
	h, err := Handler(ctx, cfg, NoPool{}, time.Now)
	if err != nil {
		return nil, err
	}
	return function.HTTP(h), nil
}

// Handler is the dashboard over pool and the function's table, its
// sessions sealed with cfg.DashboardSessionKey, telling the time by now.
// The browser tests serve it over a test double of the pool.
func Handler(_ context.Context, cfg function.Config, pool identity.Pool, now func() time.Time) (http.Handler, error) {
	db := base.DB(cfg)
	sm, err := sessions.NewManager(store.NewSessions(db), []byte(cfg.DashboardSessionKey), now)
	if err != nil {
		return nil, err
	}
	balances, err := services.Balances(db)
	if err != nil {
		return nil, err
	}
	return dashboard.New(dashboard.Deps{Pool: pool, Sessions: sm, Wallets: balances, Now: now})
}

// ErrNoPool is every answer of NoPool.
var ErrNoPool = errors.New("dashboard: no user pool configured")

// NoPool is the pool of a function given none: every call fails with
// ErrNoPool, which the pages show as "not possible right now".
type NoPool struct{}

var _ identity.Pool = NoPool{}

// SignIn fails with ErrNoPool.
func (NoPool) SignIn(context.Context, string, string) (identity.Step, error) {
	return identity.Step{}, ErrNoPool
}

// SetNewPassword fails with ErrNoPool.
func (NoPool) SetNewPassword(context.Context, string, string, string) (identity.Step, error) {
	return identity.Step{}, ErrNoPool
}

// AnswerMFA fails with ErrNoPool.
func (NoPool) AnswerMFA(context.Context, string, string, string) (identity.Step, error) {
	return identity.Step{}, ErrNoPool
}

// ForgotPassword fails with ErrNoPool.
func (NoPool) ForgotPassword(context.Context, string) error { return ErrNoPool }

// ConfirmForgotPassword fails with ErrNoPool.
func (NoPool) ConfirmForgotPassword(context.Context, string, string, string) error { return ErrNoPool }

// Verify fails with ErrNoPool.
func (NoPool) Verify(context.Context, string) (identity.User, error) {
	return identity.User{}, ErrNoPool
}

// CreateUser fails with ErrNoPool.
func (NoPool) CreateUser(context.Context, string, string, identity.Role, string) error {
	return ErrNoPool
}

// Members fails with ErrNoPool.
func (NoPool) Members(context.Context, string) ([]identity.Member, error) { return nil, ErrNoPool }

// SetRole fails with ErrNoPool.
func (NoPool) SetRole(context.Context, string, string, identity.Role) error { return ErrNoPool }

// RemoveUser fails with ErrNoPool.
func (NoPool) RemoveUser(context.Context, string, string) error { return ErrNoPool }
