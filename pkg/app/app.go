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

// The constructors below take the caches (base.Caches) the function reads
// companies and fee schedules through. A Lambda instance builds its own; the
// process that runs every function (the dev server, a test) builds one
// (base.NewCaches) for as long as it runs and gives it to every function it
// builds. Shared, they are forgotten at once by the console's changes
// (adminapi), so that there a key rotation, a deactivation or a new fee
// schedule takes effect at once in every function, where between Lambda
// instances it takes cache.Staleness.

// HTTPFunction is an HTTP function as the process that runs them all
// knows it.
type HTTPFunction struct {
	// New is its constructor.
	New func(context.Context, function.Config, base.Caches) (function.HTTPHandler, error)
	// Errors is its error catalogue (function.Catalogue): a test holds it
	// to the packages the function links, and the union of all to the API
	// document's error codes.
	Errors httpapi.Catalogue
}

// HTTPFunctions maps each HTTP function's folder name under functions/ to
// its constructor and its error catalogue.
var HTTPFunctions = map[string]HTTPFunction{
	"auth":                  {New: authapi.NewWith, Errors: authapi.Errors},
	"admin":                 {New: adminNew, Errors: adminapi.Errors},
	"wallets":               {New: walletsapi.NewWith, Errors: walletsapi.Errors},
	"payments":              {New: paymentsapi.NewWith, Errors: paymentsapi.Errors},
	"webhooks":              {New: webhooksapi.NewWith, Errors: webhooksapi.Errors},
	"customers":             {New: customersNew, Errors: customersapi.Errors},
	"cards":                 {New: cardsapi.NewWith, Errors: cardsapi.Errors},
	"card-network":          {New: cardnetwork.NewWith, Errors: cardnetwork.Errors},
	"issuer-webhooks":       {New: uncached(issuerwebhooks.New), Errors: issuerwebhooks.Errors},
	"issuer-authorizations": {New: issuerauthorizations.NewWith, Errors: issuerauthorizations.Errors},
	"openapi":               {New: uncached(openapi.New), Errors: openapi.Errors},
	"dashboard":             {New: dashboard.NewWith, Errors: dashboard.Errors},
	"stripe-webhooks":       {New: stripewebhooks.NewWith, Errors: stripewebhooks.Errors},
	"operator-callbacks":    {New: uncached(operatorcallbacks.New), Errors: operatorcallbacks.Errors},
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

// SQSFunctions maps each queue consumer's folder name to its constructor.
var SQSFunctions = map[string]func(context.Context, function.Config, base.Caches) (function.SQSHandler, error){
	"payout-worker": func(_ context.Context, cfg function.Config, caches base.Caches) (function.SQSHandler, error) {
		return payoutworker.NewWithClock(cfg, caches, time.Now)
	},
	"webhook-worker": uncached(webhookworker.New),
	"card-worker":    cardworker.NewWith,
	"fund-worker":    uncached(fundworker.New),
}

// ScheduleFunctions maps each scheduled function's folder name to its
// constructor.
var ScheduleFunctions = map[string]func(context.Context, function.Config, base.Caches) (function.ScheduleHandler, error){
	"sweeper": func(_ context.Context, cfg function.Config, caches base.Caches) (function.ScheduleHandler, error) {
		return sweeper.NewWithClock(cfg, caches, time.Now)
	},
}

// uncached returns the constructor of a function that keeps no cache.
func uncached[H any](newH func(context.Context, function.Config) (H, error)) func(context.Context, function.Config, base.Caches) (H, error) {
	return func(ctx context.Context, cfg function.Config, _ base.Caches) (H, error) { return newH(ctx, cfg) }
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
