package apptest

import (
	"context"
	"slices"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"payments/pkg/function"
)

// RequestCounter counts the AWS requests of a function's clients: each
// operation, named "<operation> <resource variable>", and each HTTP
// attempt (an SDK retry is a second attempt of one operation). Its zero
// value is ready to count.
type RequestCounter struct {
	mu         sync.Mutex
	operations map[string]int
	attempts   int
}

// Take returns what was counted since the last Take, and starts again.
func (c *RequestCounter) Take() (map[string]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ops, attempts := c.operations, c.attempts
	c.operations, c.attempts = map[string]int{}, 0
	return ops, attempts
}

func (c *RequestCounter) add(operation string, attempts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.operations == nil {
		c.operations = map[string]int{}
	}
	if operation != "" {
		c.operations[operation]++
	}
	c.attempts += attempts
}

// Counting returns cfg with every request of its clients counted by c.
func (c *RequestCounter) Counting(cfg function.Config) function.Config {
	names := ResourceNames(cfg)
	count := func(s *middleware.Stack) error {
		err := s.Initialize.Add(middleware.InitializeMiddlewareFunc("CountOperation",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				resource := "?"
				switch p := in.Parameters.(type) {
				case *dynamodb.TransactWriteItemsInput:
					resource = "TABLE_NAME" // checked item by item by the grants of Recording
				default:
					for _, field := range []string{"TableName", "QueueUrl"} {
						if v := StringField(p, field); v != "" {
							resource = names[v]
						}
					}
				}
				c.add(awsmiddleware.GetOperationName(ctx)+" "+resource, 0)
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
		if err != nil {
			return err
		}
		return s.Finalize.Add(middleware.FinalizeMiddlewareFunc("CountAttempt",
			func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				c.add("", 1)
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
	}
	cfg.AWS.APIOptions = append(slices.Clone(cfg.AWS.APIOptions), count)
	return cfg
}

// Total returns the number of requests ops counts.
func Total(ops map[string]int) int {
	n := 0
	for _, v := range ops {
		n += v
	}
	return n
}
