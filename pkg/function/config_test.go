package function_test

import (
	"context"
	"errors"
	"testing"

	"payments/pkg/cards"
	"payments/pkg/function"
	"payments/pkg/payments"
	"payments/pkg/providers"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/reconcile"
)

// TestAWSFromEnv: the region and the role's credentials come from the
// variables Lambda sets, and a missing one stops the function at init.
func TestAWSFromEnv(t *testing.T) {
	tests := []struct {
		name                 string
		env                  map[string]string
		wantRegion, wantSess string
		wantErr              bool
	}{
		{"as Lambda sets them", map[string]string{"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token"}, "eu-west-1", "token", false},
		{"the default region", map[string]string{"AWS_DEFAULT_REGION": "us-east-1",
			"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret"}, "us-east-1", "", false},
		{"no region", map[string]string{"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret"}, "", "", true},
		{"no secret key", map[string]string{"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKID"}, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
				t.Setenv(k, tt.env[k])
			}
			cfg, err := function.AWSFromEnv()
			if tt.wantErr {
				if !errors.Is(err, function.ErrConfig) {
					t.Fatalf("err %v, want ErrConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			creds, err := cfg.Credentials.Retrieve(context.Background())
			if err != nil || cfg.Region != tt.wantRegion || creds.AccessKeyID != "AKID" || creds.SecretAccessKey != "secret" || creds.SessionToken != tt.wantSess {
				t.Errorf("region %q, credentials %+v %v", cfg.Region, creds, err)
			}
		})
	}
}

// TestDomainDefaults holds the configuration's copies of the domains'
// defaults and bounds, and of the modes' names, equal to the domains' own:
// the configuration repeats them so as to link none of those packages.
func TestDomainDefaults(t *testing.T) {
	tests := []struct {
		name         string
		config, rule any
	}{
		{"payment deadline", function.DefaultPaymentDeadline, payments.DefaultDeadline},
		{"payment deadline's bound", function.MaxPaymentDeadline, payments.ReconcileWindow},
		{"card hold expiry", function.DefaultCardHoldExpiry, cards.DefaultHoldExpiry},
		{"reconciliation's first window", function.DefaultReconciliationFirstWindow, reconcile.DefaultFirstWindow},
		{"issuer decision deadline", function.DefaultIssuerDecisionDeadline, issuersandbox.DefaultDecisionDeadline},
		{"sandbox mode", function.ModeSandbox, providers.ModeSandbox},
		{"production mode", function.ModeProduction, providers.ModeProduction},
	}
	for _, tt := range tests {
		if tt.config != tt.rule {
			t.Errorf("%s: the configuration has %v, its domain %v", tt.name, tt.config, tt.rule)
		}
	}
}
