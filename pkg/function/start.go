package function

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"payments/pkg/correlation"
	"payments/pkg/metrics"
)

// Start is the whole of a function's main: JSON logs carrying the Lambda
// request id and the correlation id of the work (pkg/correlation), the
// configuration of function name (its folder under functions/ and its key
// in Functions) from the environment, the handler from build, then
// lambda.Start, with HealthCheckEvent answered before the handler is called
// (HealthChecked) and every invocation's context carrying the function's
// metrics recorder (pkg/metrics: EMF lines on standard output, in
// cfg.MetricsNamespace). secrets reads the secrets the function
// is given by ARN (secrets.New); nil for a function that reads none. A
// function that cannot be configured logs why and exits, so Lambda reports
// an init error.
func Start[H HTTPHandler | SQSHandler | ScheduleHandler | DeployHookHandler](name string, build func(context.Context, Config) (H, error), secrets NewSecretReader) {
	slog.SetDefault(slog.New(correlation.LogHandler(lambdacontext.NewLogHandler())))
	ctx := context.Background()
	cfg, err := ConfigFromEnv(ctx, name, secrets)
	if err != nil {
		slog.Error("read configuration", "function", name, "error", err)
		os.Exit(1)
	}
	h, err := build(ctx, cfg)
	if err != nil {
		slog.Error("build handler", "function", name, "error", err)
		os.Exit(1)
	}
	recorder := metrics.New(os.Stdout, cfg.MetricsNamespace, name)
	lambda.StartWithOptions(HealthChecked(name, lambda.NewHandler(h)), lambda.WithContext(metrics.NewContext(ctx, recorder)))
}
