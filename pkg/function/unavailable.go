package function

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
)

// Unavailable reports whether err is a dependency that did not answer in
// time or refused for load, so that the request may be sent again shortly:
// a deadline that passed (the function's own, or a wait within it), or an
// AWS call (DynamoDB, SQS, …) that still failed after the SDK's retries
// with what the SDK itself counts as retryable: throttling, a time-out, a
// connection error, a 5xx; or the SDK's retry quota spent. The catalogue
// answers it 503 TEMPORARILY_UNAVAILABLE with Retry-After, never 500: a
// request that moves money is safe to send again with its Idempotency-Key,
// which finds what the first one committed (docs/idempotency.md).
func Unavailable(err error) bool {
	var quota ratelimit.QuotaExceededError
	switch {
	case err == nil:
		return false
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &quota):
		return true
	}
	return retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}
