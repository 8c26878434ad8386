package services_test

import (
	"context"
	"testing"
	"time"

	"payments/pkg/app"
	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/services"
	"payments/pkg/store/storetest"
)

// productionConfig is the configuration of every function of a production
// deployment; none of them calls AWS or a provider to be built.
func productionConfig() function.Config {
	return function.Config{
		Mode:                 function.ModeProduction,
		TableName:            "t",
		AuditTableName:       "a",
		AWS:                  storetest.AWSConfig(),
		TokenKeys:            apptest.AuthTestKeys,
		AdminAPIKey:          apptest.AuthTestAdminKey,
		DashboardSessionKey:  apptest.DashboardTestKey,
		TokenTTL:             time.Hour,
		RevealLimit:          100,
		CompanyLimits:        apptest.GenerousLimits,
		CardKey:              apptest.TestCardKey,
		WebhookKey:           apptest.TestWebhookKey,
		IssuerWebhookSecret:  apptest.IssuerTestSecret,
		IssuerAPIKey:         apptest.StripeTestKey,
		OperatorBaseURL:      "http://127.0.0.1:9",
		OperatorAPIToken:     apptest.OperatorTestToken,
		PayoutsQueueURL:      "http://q/payouts",
		BulkPayoutsQueueURL:  "http://q/bulk",
		WebhooksQueueURL:     "http://q/webhooks",
		IssuerEventsQueueURL: "http://q/issuer-events",
		FundsQueueURL:        "http://q/funds",
		DocumentsBucket:      "documents",
		UserPoolID:           "us-east-1_test",
		UserPoolClientID:     "dashboard",
	}
}

// TestProductionBuildsNoSandboxStore: no function built in production mode
// builds the simulated providers' records (providers.ForMode asks for them
// in sandbox mode alone), where a sandbox build does.
func TestProductionBuildsNoSandboxStore(t *testing.T) {
	ctx := context.Background()
	build := map[string]func(function.Config) error{}
	for name, fn := range app.HTTPFunctions {
		build[name] = func(cfg function.Config) error { _, err := fn.New(ctx, cfg, base.NewCaches(time.Now)); return err }
	}
	for name, newH := range app.SQSFunctions {
		build[name] = func(cfg function.Config) error { _, err := newH(ctx, cfg, base.NewCaches(time.Now)); return err }
	}
	for name, newH := range app.ScheduleFunctions {
		build[name] = func(cfg function.Config) error { _, err := newH(ctx, cfg, base.NewCaches(time.Now)); return err }
	}
	for name, b := range build {
		t.Run(name, func(t *testing.T) {
			before := services.SandboxBuilds()
			if err := b(productionConfig()); err != nil {
				t.Fatalf("production build: %v", err)
			}
			if n := services.SandboxBuilds() - before; n != 0 {
				t.Errorf("a production build built the simulated providers' records %d times", n)
			}
		})
	}
	t.Run("a sandbox build", func(t *testing.T) {
		cfg := productionConfig()
		cfg.Mode = function.ModeSandbox
		before := services.SandboxBuilds()
		if err := build["payments"](cfg); err != nil {
			t.Fatal(err)
		}
		if services.SandboxBuilds() == before {
			t.Error("a sandbox build of the payments function built no simulated provider's records")
		}
	})
}
