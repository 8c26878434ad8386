package function

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"payments/pkg/contention"
	"payments/pkg/idempotency"
	"payments/pkg/idempotency/idempotencyhttp"
)

// sdkError wraps err as the SDK returns a failed call, after its retries.
func sdkError(err error) error {
	return fmt.Errorf("store: get wallet: %w", &smithy.OperationError{
		ServiceID: "DynamoDB", OperationName: "GetItem",
		Err: &retry.MaxAttemptsError{Attempt: 3, Err: err},
	})
}

// status5xx is an HTTP answer of status with no API error code.
func status5xx(status int) error {
	return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
		Err:      errors.New("unexpected end of response"),
	}}
}

// TestUnavailable: what a slow or throttling dependency returns is a 503
// TEMPORARILY_UNAVAILABLE with Retry-After; a definitive answer, a request
// the client cancelled or a domain error keeps its own.
func TestUnavailable(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"the function's deadline", fmt.Errorf("store: get card: %w", context.DeadlineExceeded), true},
		{"DynamoDB throttles", sdkError(&types.ProvisionedThroughputExceededException{Message: new(string)}), true},
		{"DynamoDB request limit", sdkError(&smithy.GenericAPIError{Code: "RequestLimitExceeded"}), true},
		{"SQS throttles", sdkError(&smithy.GenericAPIError{Code: "ThrottlingException"}), true},
		{"a 503 answer", sdkError(status5xx(503)), true},
		{"a 500 answer", sdkError(status5xx(500)), true},
		{"connection refused", sdkError(&net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}), true},
		{"a read time-out", sdkError(&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}), true},
		{"the SDK's retry quota spent", fmt.Errorf("failed to get rate limit token, %w", ratelimit.QuotaExceededError{Available: 0, Requested: 5}), true},
		{"a condition that failed", sdkError(&types.ConditionalCheckFailedException{Message: new(string)}), false},
		{"a validation error", sdkError(&smithy.GenericAPIError{Code: "ValidationException"}), false},
		{"a 400 answer", sdkError(status5xx(400)), false},
		{"the client went away", fmt.Errorf("store: get card: %w", context.Canceled), false},
		{"a conflict", contention.ErrConflict, false},
		{"a plain error", errors.New("boom"), false},
		{"nil", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Unavailable(tt.err); got != tt.want {
				t.Fatalf("Unavailable(%v) = %v, want %v", tt.err, got, tt.want)
			}
			if tt.err == nil {
				return
			}
			body, known := CommonErrors.Body(tt.err)
			if tt.want && (!known || body.StatusCode != 503 || body.Code != "TEMPORARILY_UNAVAILABLE") {
				t.Fatalf("answered %+v", body)
			}
		})
	}
	// A domain error that wraps a deadline keeps its own answer, and an
	// answer of 503 with Retry-After releases an Idempotency-Key.
	body, _ := Catalogue(idempotencyhttp.Errors).Body(fmt.Errorf("%w: %w", idempotency.ErrKeyInUse, context.DeadlineExceeded))
	if body.Code != "IDEMPOTENCY_KEY_IN_USE" {
		t.Fatalf("a domain error wrapping a deadline answered %+v", body)
	}
	if idempotencyhttp.Stored(503, http.Header{"Retry-After": {"2"}}) {
		t.Fatal("a 503 with Retry-After is stored")
	}
}
