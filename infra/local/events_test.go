package local_test

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"payments/infra/local/devserver"
	"payments/infra/local/localtest"
	"payments/pkg/app"
)

// TestSampleEvents feeds every events/<function>/*.json through that
// function's handler, built from pkg/app as its main builds it, against a
// fresh table and queues, and checks what events/<function>/expected.json
// gives the file: the HTTP status for an HTTP function, the number of batch
// item failures for a queue consumer (0 when absent); a scheduled function
// must return no error. "Bearer TOKEN" in an event becomes a real token of
// an approved company; admin events carry the test admin key
// (localtest.AdminAPIKey).
func TestSampleEvents(t *testing.T) {
	tpl := localtest.Template(t)
	res := localtest.Resources(t, tpl)
	handlers := localtest.HTTPHandlers(t, tpl, res)
	token := localtest.Token(t, handlers)
	samples := localtest.SampleEvents(t, token)
	if len(samples) == 0 {
		t.Fatal("no sample events under events/")
	}
	for _, s := range samples {
		t.Run(s.Function+"/"+s.File, func(t *testing.T) {
			ctx := devserver.LambdaContext(t.Context(), s.Function)
			switch {
			case handlers[s.Function] != nil:
				var e events.APIGatewayV2HTTPRequest
				if err := json.Unmarshal(s.Payload, &e); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				if s.Expected == 0 {
					t.Fatalf("%s: events/%s/expected.json gives no status for it", s, s.Function)
				}
				resp, err := handlers[s.Function](ctx, e)
				if err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				if resp.StatusCode != s.Expected {
					t.Errorf("%s: status %d, want %d; body %s", s, resp.StatusCode, s.Expected, resp.Body)
				}
			case app.SQSFunctions[s.Function] != nil:
				// expected.json gives the number of batch item failures.
				h, err := app.SQSFunctions[s.Function](ctx, localtest.FunctionConfig(t, tpl, res, s.Function))
				if err != nil {
					t.Fatalf("%s: init: %v", s.Function, err)
				}
				var e events.SQSEvent
				if err := json.Unmarshal(s.Payload, &e); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				resp, err := h(ctx, e)
				if err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				if len(resp.BatchItemFailures) != s.Expected {
					t.Errorf("%s: %d batch item failures, want %d: %+v", s, len(resp.BatchItemFailures), s.Expected, resp.BatchItemFailures)
				}
			case app.ScheduleFunctions[s.Function] != nil:
				h, err := app.ScheduleFunctions[s.Function](ctx, localtest.FunctionConfig(t, tpl, res, s.Function))
				if err != nil {
					t.Fatalf("%s: init: %v", s.Function, err)
				}
				var e events.EventBridgeEvent
				if err := json.Unmarshal(s.Payload, &e); err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				if err := h(ctx, e); err != nil {
					t.Errorf("%s: %v", s, err)
				}
			default:
				t.Errorf("%s: no function %q in pkg/app", s, s.Function)
			}
		})
	}
}
