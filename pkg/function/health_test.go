package function_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"payments/pkg/function"
)

// TestHealthChecked wraps handlers of each kind as Start does: the
// health-check event is answered without calling the handler, and any
// other payload (an event of API Gateway, SQS, EventBridge or CodeDeploy, one
// that merely mentions health_check, malformed JSON) reaches the handler,
// which answers it as it would unwrapped.
func TestHealthChecked(t *testing.T) {
	var called int
	httpHandler := function.HTTPHandler(func(_ context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		called++
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: e.RawPath}, nil
	})
	sqsHandler := function.SQSHandler(func(_ context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
		called++
		return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: e.Records[0].MessageId}}}, nil
	})
	scheduleHandler := function.ScheduleHandler(func(_ context.Context, e events.EventBridgeEvent) (any, error) {
		called++
		return map[string]string{"source": e.Source}, nil
	})
	hookHandler := function.DeployHookHandler(func(_ context.Context, e function.DeployHookEvent) error {
		called++
		return errors.New("hook " + e.DeploymentID)
	})
	handlers := map[string]lambda.Handler{
		"http": lambda.NewHandler(httpHandler), "sqs": lambda.NewHandler(sqsHandler),
		"schedule": lambda.NewHandler(scheduleHandler), "hook": lambda.NewHandler(hookHandler),
	}
	health := `{"status":"ok","function":"sweeper"}`
	tests := []struct {
		name, handler, payload string
		health                 bool // answered Health, else as the handler answers unwrapped
	}{
		{"health of an HTTP function", "http", function.HealthCheckEvent, true},
		{"health of a queue consumer", "sqs", function.HealthCheckEvent, true},
		{"health of a scheduled function", "schedule", function.HealthCheckEvent, true},
		{"health of a hook", "hook", function.HealthCheckEvent, true},
		{"health, spaced", "http", " {\n \"health_check\" : { } }\n", true},
		{"API Gateway event", "http", `{"version":"2.0","rawPath":"/api/v1/wallets","requestContext":{"http":{"method":"GET"}}}`, false},
		{"API Gateway event whose body is the health check", "http", `{"rawPath":"/x","body":"{\"health_check\":{}}"}`, false},
		{"SQS event", "sqs", `{"Records":[{"messageId":"m-1","body":"{}","eventSource":"aws:sqs"}]}`, false},
		{"schedule event", "schedule", `{"source":"aws.events","detail-type":"Scheduled Event","detail":{}}`, false},
		{"CodeDeploy event", "hook", `{"DeploymentId":"d-1","LifecycleEventHookExecutionId":"h-1"}`, false},
		{"health_check beside another key", "schedule", `{"health_check":{},"source":"aws.events"}`, false},
		{"malformed JSON", "sqs", `{"health_check":`, false},
		{"malformed event", "http", `[`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []byte
			var wantErr error
			if tt.health {
				want = []byte(health)
			} else {
				want, wantErr = handlers[tt.handler].Invoke(context.Background(), []byte(tt.payload))
			}
			unwrappedCalls := called
			called = 0
			got, err := function.HealthChecked("sweeper", handlers[tt.handler]).Invoke(context.Background(), []byte(tt.payload))
			if string(got) != string(want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("answer %s, %v; want %s, %v", got, err, want, wantErr)
			}
			if called != unwrappedCalls {
				t.Errorf("handler called %d times, want %d", called, unwrappedCalls)
			}
			called = 0
		})
	}
}

// TestHealthAnswer: the answer is a Health, as the deploy-check function
// decodes it.
func TestHealthAnswer(t *testing.T) {
	h := function.HealthChecked("auth", lambda.NewHandler(func() error { return errors.New("called") }))
	out, err := h.Invoke(context.Background(), []byte(function.HealthCheckEvent))
	if err != nil {
		t.Fatal(err)
	}
	var got function.Health
	if err := json.Unmarshal(out, &got); err != nil || got != (function.Health{Status: function.HealthOK, Function: "auth"}) {
		t.Fatalf("answer %s: %+v, %v", out, got, err)
	}
}
