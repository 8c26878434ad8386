// Package function is what every Lambda function shares: its
// configuration (Config, Functions), the one error catalogue (Errors), the
// handler types and Start. Each function is assembled by a package of its
// own under pkg/function (auth by pkg/function/authapi, the payouts queues'
// consumer by pkg/function/payoutworker, …), which functions/<name>/main.go
// hands to Start; the local dev server and the tests call the same
// constructors (pkg/app lists them), so they run the production handlers. A
// function's package imports no other function's, so its bootstrap links
// only the AWS clients it calls (docs/footprint.md).
package function

import (
	"context"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"payments/pkg/correlation"
	"payments/pkg/deadline"
	"payments/pkg/httpapi"
	"payments/pkg/metrics"
)

// HTTPHandler is the Lambda handler of a function behind the HTTP API
// (payload format 2.0).
type HTTPHandler func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// SQSHandler is the Lambda handler of a queue consumer that reports partial
// batch failures.
type SQSHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// ScheduleHandler is the Lambda handler of a scheduled function. It
// answers what it did, which Lambda returns to a synchronous invoker
// (`make invoke`, `sam local invoke`) and EventBridge ignores.
type ScheduleHandler func(context.Context, events.EventBridgeEvent) (any, error)

// DeployHookEvent is what CodeDeploy sends the function of a deployment's
// lifecycle hook (BeforeAllowTraffic).
type DeployHookEvent struct {
	DeploymentID                  string `json:"DeploymentId"`
	LifecycleEventHookExecutionID string `json:"LifecycleEventHookExecutionId"`
}

// DeployHookHandler is the Lambda handler of a CodeDeploy lifecycle hook. It
// reports the hook's status to CodeDeploy itself; its error says only that
// it could not.
type DeployHookHandler func(context.Context, DeployHookEvent) error

// Queue sends messages to one SQS queue: a queue.Publisher.
type Queue interface {
	Send(ctx context.Context, body []byte, delay time.Duration) error
}

// HTTP returns the Lambda handler of an HTTP function that serves h,
// as httpadapter.NewV2(h).ProxyWithContext would, with API Gateway's
// request id as the correlation id of the request and of the work it
// starts (pkg/correlation) and, with the invocation's, the request's ids
// for its routes (httpapi.RequestID) and its log line, except for an event that
// makes no HTTP request (a control character in the query string, a base64
// body that is not): that is answered 400 MALFORMED_REQUEST, where the
// adapter fails the invocation and API Gateway answers 5xx. An answer 500
// (an error the catalogue does not know: a bug, or a failure nothing
// expected) is counted as InternalErrors: the function's invocation
// succeeded, so Lambda's Errors does not see it, and the alarm over it
// rolls a deployment back (docs/operations.md).
func HTTP(h http.Handler) HTTPHandler {
	var accessor core.RequestAccessorV2
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		// The work ends before the invocation does, so that the answer is
		// ours, never the platform's time-out (package deadline).
		ctx, cancel := deadline.Work(ctx)
		defer cancel()
		w := core.NewProxyResponseWriterV2()
		ctx = correlation.NewContext(ctx, ev.RequestContext.RequestID)
		ctx = withRequestID(ctx, ev)
		r, err := accessor.EventToRequestWithContext(ctx, ev)
		if err != nil {
			body, _ := CommonErrors.Body(httpapi.ErrMalformedRequest)
			httpapi.Write(w, body.StatusCode, body)
		} else {
			h.ServeHTTP(w, r)
		}
		resp, err := w.GetProxyResponse()
		if resp.StatusCode == http.StatusInternalServerError {
			metrics.Count(ctx, metrics.InternalErrors)
		}
		return resp, err
	}
}

// withRequestID returns ctx carrying the ids of ev's request for the HTTP
// layer (httpapi.WithRequestID): API Gateway's request id, or the Lambda
// invocation's when the event has none, and the invocation's.
func withRequestID(ctx context.Context, ev events.APIGatewayV2HTTPRequest) context.Context {
	var invocation string
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		invocation = lc.AwsRequestID
	}
	request := ev.RequestContext.RequestID
	if request == "" {
		request = invocation
	}
	return httpapi.WithRequestID(ctx, request, invocation)
}
