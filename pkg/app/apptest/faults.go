package apptest

import (
	"context"
	"fmt"

	"github.com/aws/smithy-go/middleware"

	"payments/pkg/function"
)

// FailingWith returns cfg whose AWS calls that match fail with err, before
// they are sent.
func FailingWith(cfg function.Config, match func(input any) bool, err error) function.Config {
	cfg.AWS = cfg.AWS.Copy()
	cfg.AWS.APIOptions = append(cfg.AWS.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("fail-with", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if match(in.Parameters) {
				return middleware.InitializeOutput{}, middleware.Metadata{}, err
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	})
	return cfg
}

// Failing returns cfg whose DynamoDB calls fail when fail says so of a
// request.
func Failing(cfg function.Config, fail func(input any) bool) function.Config {
	return FailingWith(cfg, fail, fmt.Errorf("injected failure"))
}

// SlowWith returns cfg whose AWS calls that match do not answer before
// their context ends, and then fail with its error: a dependency too slow
// for the time the caller has.
func SlowWith(cfg function.Config, match func(input any) bool) function.Config {
	cfg.AWS = cfg.AWS.Copy()
	cfg.AWS.APIOptions = append(cfg.AWS.APIOptions, func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("slow", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if match(in.Parameters) {
				<-ctx.Done()
				return middleware.InitializeOutput{}, middleware.Metadata{}, ctx.Err()
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.After)
	})
	return cfg
}
