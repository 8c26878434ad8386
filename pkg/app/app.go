// Package app assembles each Lambda function from its configuration: AWS
// clients, stores, services and routes. functions/<name>/main.go calls one
// constructor here and hands the result to lambda.Start; the local dev server
// and the tests call the same constructors, so they run the production
// handlers.
package app

import (
	"context"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"payments/pkg/httpapi"
)

// HTTPHandler is the Lambda handler of a function behind the HTTP API
// (payload format 2.0).
type HTTPHandler func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// SQSHandler is the Lambda handler of a queue consumer that reports partial
// batch failures.
type SQSHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// ScheduleHandler is the Lambda handler of a scheduled function.
type ScheduleHandler func(context.Context, events.EventBridgeEvent) error

// HTTPFunctions maps each HTTP function's folder name under functions/ to
// its constructor.
var HTTPFunctions = map[string]func(context.Context, Config) (HTTPHandler, error){
	"auth": NewAuth, "admin": NewAdmin,
	"wallets": NewWallets, "payments": NewPayments,
	"webhooks": NewWebhooks, "customers": NewCustomers, "cards": NewCards,
	"issuer-webhooks": NewIssuerWebhooks, "openapi": NewOpenAPI,
}

// SQSFunctions maps each queue consumer's folder name to its constructor.
var SQSFunctions = map[string]func(context.Context, Config) (SQSHandler, error){
	"payout-worker":  NewPayoutWorker,
	"webhook-worker": NewWebhookWorker,
	"card-worker":    NewCardWorker,
	"fund-worker":    NewFundWorker,
}

// ScheduleFunctions maps each scheduled function's folder name to its
// constructor.
var ScheduleFunctions = map[string]func(context.Context, Config) (ScheduleHandler, error){
	"sweeper": NewSweeper,
}

// lambdaHTTP returns the Lambda handler of an HTTP function that serves h,
// as httpadapter.NewV2(h).ProxyWithContext would, except for an event that
// makes no HTTP request (a control character in the query string, a base64
// body that is not): that is answered 400 MALFORMED_REQUEST, where the
// adapter fails the invocation and API Gateway answers 5xx.
func lambdaHTTP(h http.Handler) HTTPHandler {
	var accessor core.RequestAccessorV2
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		w := core.NewProxyResponseWriterV2()
		r, err := accessor.EventToRequestWithContext(ctx, ev)
		if err != nil {
			body, _ := Errors.Body(httpapi.ErrMalformedRequest)
			httpapi.Write(w, body.StatusCode, body)
		} else {
			h.ServeHTTP(w, r)
		}
		return w.GetProxyResponse()
	}
}
