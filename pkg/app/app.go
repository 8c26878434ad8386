// Package app assembles each Lambda function from its configuration: AWS
// clients, stores, services and routes. functions/<name>/main.go calls one
// constructor here and hands the result to lambda.Start; the local dev server
// and the tests call the same constructors, so they run the production
// handlers.
package app

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
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
	"webhooks": NewWebhooks,
}

// SQSFunctions maps each queue consumer's folder name to its constructor.
var SQSFunctions = map[string]func(context.Context, Config) (SQSHandler, error){
	"payout-worker":  NewPayoutWorker,
	"webhook-worker": NewWebhookWorker,
}

// ScheduleFunctions maps each scheduled function's folder name to its
// constructor.
var ScheduleFunctions = map[string]func(context.Context, Config) (ScheduleHandler, error){
	"sweeper": NewSweeper,
}
