package function_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"payments/pkg/correlation"
	"payments/pkg/function"
	"payments/pkg/httpapi"
	"payments/pkg/metrics"
)

// TestHTTPCountsInternalErrors: an HTTP function's answer 500 is counted
// (InternalErrors), under the request's correlation id; no other answer
// is, a provider's 502 or 503 included.
func TestHTTPCountsInternalErrors(t *testing.T) {
	for _, status := range []int{200, 400, 404, 500, 502, 503} {
		var emf bytes.Buffer
		var seen string
		h := function.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = correlation.ID(r.Context())
			w.WriteHeader(status)
		}))
		ctx := metrics.NewContext(context.Background(), metrics.New(&emf, "payments/test", "payments"))
		ev := events.APIGatewayV2HTTPRequest{RawPath: "/api/v1/payment/balance", RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: "req-9", HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/api/v1/payment/balance"},
		}}
		resp, err := h(ctx, ev)
		if err != nil || resp.StatusCode != status {
			t.Fatalf("%d: answered %d, %v", status, resp.StatusCode, err)
		}
		counted := strings.Count(emf.String(), `"InternalErrors":1`)
		if want := status == 500; (counted == 1) != want || counted > 1 || seen != "req-9" ||
			want && !strings.Contains(emf.String(), `"correlation_id":"req-9"`) {
			t.Errorf("%d: counted %d times, the handler saw correlation id %q: %s", status, counted, seen, emf.String())
		}
	}
}

// TestHTTPRequestID: a route reads API Gateway's request id
// (httpapi.RequestID), or the Lambda invocation's when the event has none.
func TestHTTPRequestID(t *testing.T) {
	tests := []struct {
		name, event, invocation, want string
	}{
		{"api gateway's", "req-9", "inv-1", "req-9"},
		{"the invocation's without one", "", "inv-1", "inv-1"},
		{"none outside Lambda", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen string
			h := function.HTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				seen = httpapi.RequestID(r)
				w.WriteHeader(http.StatusNoContent)
			}))
			ctx := context.Background()
			if tt.invocation != "" {
				ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: tt.invocation})
			}
			ev := events.APIGatewayV2HTTPRequest{RawPath: "/api/v1/cards", RequestContext: events.APIGatewayV2HTTPRequestContext{
				RequestID: tt.event, HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", Path: "/api/v1/cards"},
			}}
			if _, err := h(ctx, ev); err != nil || seen != tt.want {
				t.Errorf("request id %q, %v; want %q", seen, err, tt.want)
			}
		})
	}
}
