// Package app lists every function by its folder name under functions/,
// with its constructor, for what runs them all in one process: the local
// dev server, `make invoke` and the tests. No function links it: each
// functions/<name>/main.go imports only its own package under pkg/function,
// so its bootstrap links only what it serves (docs/footprint.md).
package app

import (
	"context"
	"slices"

	"payments/pkg/function"
	"payments/pkg/function/adminapi"
	"payments/pkg/function/authapi"
	"payments/pkg/function/cardnetwork"
	"payments/pkg/function/cardsapi"
	"payments/pkg/function/cardworker"
	"payments/pkg/function/customersapi"
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

// HTTPFunctions maps each HTTP function's folder name under functions/ to
// its constructor.
var HTTPFunctions = map[string]func(context.Context, function.Config) (function.HTTPHandler, error){
	"auth": authapi.New, "admin": adminapi.New,
	"wallets": walletsapi.New, "payments": paymentsapi.New,
	"webhooks": webhooksapi.New, "customers": customersapi.New, "cards": cardsapi.New, "card-network": cardnetwork.New,
	"issuer-webhooks": issuerwebhooks.New, "issuer-authorizations": issuerauthorizations.New, "openapi": openapi.New,
	"stripe-webhooks":    stripewebhooks.New,
	"operator-callbacks": operatorcallbacks.New,
}

// Catalogues maps each HTTP function's folder name to its error catalogue
// (function.Catalogue): a test holds each to the packages the function
// links, and the union of all to the API document's error codes.
var Catalogues = map[string]httpapi.Catalogue{
	"auth": authapi.Errors, "admin": adminapi.Errors,
	"wallets": walletsapi.Errors, "payments": paymentsapi.Errors,
	"webhooks": webhooksapi.Errors, "customers": customersapi.Errors, "cards": cardsapi.Errors, "card-network": cardnetwork.Errors,
	"issuer-webhooks": issuerwebhooks.Errors, "issuer-authorizations": issuerauthorizations.Errors, "openapi": openapi.Errors,
	"stripe-webhooks":    stripewebhooks.Errors,
	"operator-callbacks": operatorcallbacks.Errors,
}

// Codes returns every error code an HTTP function may answer, sorted.
func Codes() []string {
	var codes []string
	for _, c := range Catalogues {
		codes = append(codes, c.Codes()...)
	}
	slices.Sort(codes)
	return slices.Compact(codes)
}

// SQSFunctions maps each queue consumer's folder name to its constructor.
var SQSFunctions = map[string]func(context.Context, function.Config) (function.SQSHandler, error){
	"payout-worker":  payoutworker.New,
	"webhook-worker": webhookworker.New,
	"card-worker":    cardworker.New,
	"fund-worker":    fundworker.New,
}

// ScheduleFunctions maps each scheduled function's folder name to its
// constructor.
var ScheduleFunctions = map[string]func(context.Context, function.Config) (function.ScheduleHandler, error){
	"sweeper": sweeper.New,
}

// HookFunctions maps each CodeDeploy lifecycle hook's folder name to its
// constructor. CodeDeploy invokes a hook during a deployment in AWS: the dev
// server runs none, and `make invoke` cannot run one (there is no
// CodeDeploy locally); the tests run it against a fake
// (deploychecktest).
var HookFunctions = map[string]func(context.Context, function.Config) (function.DeployHookHandler, error){
	"deploy-check": deploycheck.New,
}
