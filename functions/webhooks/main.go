// Command webhooks is the Lambda entry of the webhooks function (the delivery
// log and resends); it only wires the configuration to app.NewWebhooks.
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
		slog.Error("read configuration", "function", "webhooks", "error", err)
		os.Exit(1)
	}
	h, err := app.NewWebhooks(ctx, cfg)
	if err != nil {
		slog.Error("build handler", "function", "webhooks", "error", err)
		os.Exit(1)
	}
	lambda.Start(h)
}
