package app

import (
	"context"

	"payments/pkg/apidoc"
	"payments/pkg/httpapi"
)

// NewOpenAPI builds the openapi function: GET /openapi.json, the API's
// contract, without a token, and the API's default route, which answers
// every request no other route takes with 404 ROUTE_NOT_FOUND, or 405 and
// Allow when the path exists under other methods.
func NewOpenAPI(context.Context, Config) (HTTPHandler, error) {
	rt := httpapi.NewRouter(Errors, nil)
	apidoc.Routes(rt)
	return lambdaHTTP(rt), nil
}
