package dynamo

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"payments/pkg/contention"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestRetryPolicy(t *testing.T) {
	conflict := &types.TransactionCanceledException{CancellationReasons: []types.CancellationReason{{Code: aws.String("TransactionConflict")}}}
	other := errors.New("validation failed")
	tests := []struct {
		name    string
		policy  contention.Policy
		timeout time.Duration
		fails   int   // the attempt fails this many times
		failure error // with this
		want    error
		tries   int
	}{
		{"first try", contention.Policy{Attempts: 5}, 0, 0, nil, nil, 1},
		{"lost races, then wins", contention.Policy{Attempts: 5}, 0, 4, ErrRetry, nil, 5},
		{"conflicts, then wins", contention.Policy{Attempts: 5}, 0, 2, fmt.Errorf("wrapped: %w", conflict), nil, 3},
		{"keeps losing", contention.Policy{Attempts: 5}, 0, 100, ErrRetry, contention.ErrConflict, 5},
		{"not a race", contention.Policy{Attempts: 5}, 0, 100, other, other, 1},
		{"no time left for the back-off", contention.Policy{Attempts: 5, Base: time.Hour, Max: time.Hour}, time.Second, 100, ErrRetry, contention.ErrConflict, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			tries := 0
			err := Retry(ctx, tt.policy, "test", func(context.Context) error {
				tries++
				if tries <= tt.fails {
					return tt.failure
				}
				return nil
			})
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) || tries != tt.tries {
				t.Fatalf("err %v after %d tries, want %v after %d", err, tries, tt.want, tt.tries)
			}
		})
	}
}
