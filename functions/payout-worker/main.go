// Command payout-worker is the Lambda entry of the payout-worker function; it only wires
// the configuration to app.NewPayoutWorker.
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
		slog.Error("read configuration", "function", "payout-worker", "error", err)
		os.Exit(1)
	}
	h, err := app.NewPayoutWorker(ctx, cfg)
	if err != nil {
		slog.Error("build handler", "function", "payout-worker", "error", err)
		os.Exit(1)
	}
	lambda.Start(h)
}
