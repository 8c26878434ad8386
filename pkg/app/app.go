// Package app lists every function by its folder name under functions/,
// with its constructor, for what runs them all in one process: the local
// dev server, `make invoke` and the tests. No function links it: each
// functions/<name>/main.go imports only its own package under pkg/function,
// so its bootstrap links only what it serves (docs/footprint.md).
package app

import (
	"context"
	"slices"
	"time"

	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/authapi"
	"payments/pkg/function/base"
	"payments/pkg/function/cardnetwork"
	"payments/pkg/function/cardsapi"
	"payments/pkg/function/cardworker"
	"payments/pkg/function/customersapi"
	"payments/pkg/function/dashboard"
	"payments/pkg/function/deploycheck"
	"payments/pkg/function/fundworker"
	"payments/pkg/function/issuerauthorizations"
	"payments/pkg/function/issuerwebhooks"
	"payments/pkg/function/openapi"
	"payments/pkg/function/operatorcallbacks"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/payoutworker"
	"payments/pkg/function/stripewebhooks"
	"payments/pkg/function/sweeper"
	"payments/pkg/function/walletsapi"
	"payments/pkg/function/webhooksapi"
	"payments/pkg/function/webhookworker"
	"payments/pkg/httpapi"
)

// Caches are the caches of the one process that runs every function: each
// function built here reads companies and fee schedules through them, as
// a Lambda instance does through its own, and they live as long as the
// process. Shared, they are forgotten at once by the console's changes
// (adminapi), so that a key rotation, a deactivation or a new fee schedule
// takes effect at once in every function of the process, where between
// Lambda instances it takes cache.Staleness.
var Caches = base.NewCaches(time.Now)

// HTTPFunction is an HTTP function as the process that runs them all
// knows it.
type HTTPFunction struct {
	// New is its constructor, over Caches.
	New func(context.Context, function.Config) (function.HTTPHandler, error)
	// Errors is its error catalogue (function.Catalogue): a test holds it
	// to the packages the function links, and the union of all to the API
	// document's error codes.
	Errors httpapi.Catalogue
}

// HTTPFunctions maps each HTTP function's folder name under functions/ to
// its constructor and its error catalogue.
var HTTPFunctions = map[string]HTTPFunction{
	"auth":                  {New: withCaches(authapi.NewWith), Errors: authapi.Errors},
	"admin":                 {New: withCaches(adminNew), Errors: adminapi.Errors},
	"wallets":               {New: withCaches(walletsapi.NewWith), Errors: walletsapi.Errors},
	"payments":              {New: withCaches(paymentsapi.NewWith), Errors: paymentsapi.Errors},
	"webhooks":              {New: withCaches(webhooksapi.NewWith), Errors: webhooksapi.Errors},
	"customers":             {New: withCaches(customersNew), Errors: customersapi.Errors},
	"cards":                 {New: withCaches(cardsapi.NewWith), Errors: cardsapi.Errors},
	"card-network":          {New: withCaches(cardnetwork.NewWith), Errors: cardnetwork.Errors},
	"issuer-webhooks":       {New: issuerwebhooks.New, Errors: issuerwebhooks.Errors},
	"issuer-authorizations": {New: withCaches(issuerauthorizations.NewWith), Errors: issuerauthorizations.Errors},
	"openapi":               {New: openapi.New, Errors: openapi.Errors},
	"dashboard":             {New: withCaches(dashboard.NewWith), Errors: dashboard.Errors},
	"stripe-webhooks":       {New: withCaches(stripewebhooks.NewWith), Errors: stripewebhooks.Errors},
	"operator-callbacks":    {New: operatorcallbacks.New, Errors: operatorcallbacks.Errors},
}

// Codes returns every error code an HTTP function may answer, sorted.
func Codes() []string {
	var codes []string
	for _, fn := range HTTPFunctions {
		codes = append(codes, fn.Errors.Codes()...)
	}
	slices.Sort(codes)
	return slices.Compact(codes)
}

// SQSFunctions maps each queue consumer's folder name to its constructor,
// over Caches.
var SQSFunctions = map[string]func(context.Context, function.Config) (function.SQSHandler, error){
	"payout-worker": func(_ context.Context, cfg function.Config) (function.SQSHandler, error) {
		return payoutworker.NewWithClock(cfg, Caches, time.Now)
	},
	"webhook-worker": webhookworker.New,
	"card-worker":    withCaches(cardworker.NewWith),
	"fund-worker":    fundworker.New,
}

// ScheduleFunctions maps each scheduled function's folder name to its
// constructor, over Caches.
var ScheduleFunctions = map[string]func(context.Context, function.Config) (function.ScheduleHandler, error){
	"sweeper": func(_ context.Context, cfg function.Config) (function.ScheduleHandler, error) {
		return sweeper.NewWithClock(cfg, Caches, time.Now)
	},
}

// withCaches returns the constructor newWith over Caches.
func withCaches[H any](newWith func(context.Context, function.Config, base.Caches) (H, error)) func(context.Context, function.Config) (H, error) {
	return func(ctx context.Context, cfg function.Config) (H, error) { return newWith(ctx, cfg, Caches) }
}

// adminNew is adminapi.New over caches.
func adminNew(ctx context.Context, cfg function.Config, caches base.Caches) (function.HTTPHandler, error) {
	return adminapi.NewWith(ctx, cfg, caches, time.Now)
}

// customersNew is customersapi.New over caches.
func customersNew(ctx context.Context, cfg function.Config, caches base.Caches) (function.HTTPHandler, error) {
	return customersapi.NewWith(ctx, cfg, caches, customersapi.Fetcher(), time.Now)
}

// HookFunctions maps each CodeDeploy lifecycle hook's folder name to its
// constructor. CodeDeploy invokes a hook during a deployment in AWS: the dev
// server runs none, and `make invoke` cannot run one (there is no
// CodeDeploy locally); the tests run it against a fake
// (deploychecktest).
var HookFunctions = map[string]func(context.Context, function.Config) (function.DeployHookHandler, error){
	"deploy-check": deploycheck.New,
}
