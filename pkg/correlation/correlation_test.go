package correlation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"payments/pkg/correlation"
)

func TestLogHandlerAddsTheCorrelationID(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"with an id", correlation.NewContext(context.Background(), "req-7"), "req-7"},
		{"without", context.Background(), ""},
		{"an empty id is none", correlation.NewContext(context.Background(), ""), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(correlation.LogHandler(slog.NewJSONHandler(&buf, nil))).With("function", "payments")
			log.InfoContext(tt.ctx, "accepted", "payment_id", "p1")
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatal(err)
			}
			got, _ := line["correlation_id"].(string)
			if got != tt.want || line["function"] != "payments" || line["payment_id"] != "p1" {
				t.Fatalf("line %v: correlation_id %q, want %q", line, got, tt.want)
			}
		})
	}
}

func TestTracePrefersTheMessagesHeader(t *testing.T) {
	//lint:ignore SA1029 aws-lambda-go's own key for the invocation's trace header
	invocation := context.WithValue(context.Background(), "x-amzn-trace-id", "Root=1-a-b;Sampled=1")
	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"nothing", context.Background(), ""},
		{"the invocation's", invocation, "Root=1-a-b;Sampled=1"},
		{"the message's", correlation.WithTrace(invocation, "Root=1-c-d;Sampled=1"), "Root=1-c-d;Sampled=1"},
		{"an empty message header", correlation.WithTrace(invocation, ""), "Root=1-a-b;Sampled=1"},
	}
	for _, tt := range tests {
		if got := correlation.Trace(tt.ctx); got != tt.want {
			t.Errorf("%s: Trace = %q, want %q", tt.name, got, tt.want)
		}
	}
}
