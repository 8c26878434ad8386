// Package openapi is the openapi function: the API's contract and its
// default route.
package openapi

import (
	"context"

	"payments/pkg/apidoc"
	"payments/pkg/function"
	"payments/pkg/httpapi"
	"payments/pkg/limits/limitshttp"
)

// Errors is the function's error catalogue: the answers to the errors of
// what it links (function.Catalogue).
var Errors = function.Catalogue(limitshttp.Errors)

// New builds the openapi function: GET /openapi.json, the API's contract,
// without a token, and the API's default route, which answers every
// request no other route takes with 404 ROUTE_NOT_FOUND, or 405 and Allow
// when the path exists under other methods.
func New(context.Context, function.Config) (function.HTTPHandler, error) {
	rt := httpapi.NewRouter(Errors, nil)
	apidoc.Routes(rt)
	return function.HTTP(rt), nil
}
