// Command sweeper is the Lambda entry of the sweeper function; it only wires
// the configuration to app.NewSweeper.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"payments/pkg/app"
)

func main() {
	slog.SetDefault(slog.New(lambdacontext.NewLogHandler()))
	ctx := context.Background()
	cfg, err := app.ConfigFromEnv(ctx)
	if err != nil {
		slog.Error("read configuration", "function", "sweeper", "error", err)
		os.Exit(1)
	}
	h, err := app.NewSweeper(ctx, cfg)
	if err != nil {
		slog.Error("build handler", "function", "sweeper", "error", err)
		os.Exit(1)
	}
	lambda.Start(h)
}
