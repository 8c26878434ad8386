// Command webhook-worker is the Lambda entry of the webhook-worker function
// (one delivery attempt per SQS message); it only wires the configuration to
// app.NewWebhookWorker.
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
		slog.Error("read configuration", "function", "webhook-worker", "error", err)
		os.Exit(1)
	}
	h, err := app.NewWebhookWorker(ctx, cfg)
	if err != nil {
		slog.Error("build handler", "function", "webhook-worker", "error", err)
		os.Exit(1)
	}
	lambda.Start(h)
}
