package function_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/pkg/app/apptest"
	"payments/pkg/function"
	"payments/pkg/function/secrets"
	"payments/pkg/limits"

	"github.com/aws/aws-sdk-go-v2/aws"
)

const (
	testTokenKeyAARN  = "arn:aws:kms:us-east-1:000000000000:key/aaaaaaaa-2222-3333-4444-555555555555"
	testTokenKeyBARN  = "arn:aws:kms:us-east-1:000000000000:key/bbbbbbbb-2222-3333-4444-555555555555"
	testTokenIssuer   = "https://api.example.com/api/v1"
	testAdminKeyARN   = "arn:aws:secretsmanager:us-east-1:000000000000:secret:payments/test/admin-api-key-GhIjKl"
	testCardKeyARN    = "arn:aws:kms:us-east-1:000000000000:key/11111111-2222-3333-4444-555555555555"
	testWebhookKeyARN = "arn:aws:kms:us-east-1:000000000000:key/66666666-7777-8888-9999-000000000000"
	testAdminKey      = "admin-key-from-secrets-manager"

	testIssuerSecretARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:payments/test/issuer-webhook-secret-MnOpQr"
	testIssuerSecret    = "issuer-webhook-secret-from-secrets-manager-0123456789"

	testOperatorTokenARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:payments/test/operator-api-token-StUvWx"
	testOperatorToken    = "pawapay-token-from-secrets-manager"
	testOperatorURL      = "https://api.sandbox.pawapay.io"
	testIssuerKeyARN     = "arn:aws:secretsmanager:us-east-1:000000000000:secret:payments/test/issuer-api-key-YzAbCd"
	testIssuerKey        = "sk_test_from_secrets_manager"
	testIssuerURL        = "https://api.stripe.com"
	testOperatorKey      = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE-test-key"
	testDashboardKeyARN  = "arn:aws:secretsmanager:us-east-1:000000000000:secret:payments/test/dashboard-session-key-DsKeY1"
	testDashboardKey     = "dashboard-session-key-from-secrets-manager"
)

// fakeSecrets answers Secrets Manager's GetSecretValue for a few secrets
// and records the ids asked for. There is no Secrets Manager emulator in the
// local stack; this is the one AWS service the tests fake.
type fakeSecrets struct {
	values map[string]string
	mu     sync.Mutex
	asked  []string
}

func (f *fakeSecrets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct{ SecretId string }
	if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" || json.NewDecoder(r.Body).Decode(&in) != nil {
		http.Error(w, `{"__type":"InvalidRequestException","message":"not GetSecretValue"}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.asked = append(f.asked, in.SecretId)
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	v, ok := f.values[in.SecretId]
	if !ok {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`))
		return
	}
	json.NewEncoder(w).Encode(map[string]string{"ARN": in.SecretId, "Name": in.SecretId, "SecretString": v})
}

// takeAsked returns the secret ids asked for since the last call.
func (f *fakeSecrets) takeAsked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	asked := f.asked
	f.asked = nil
	return asked
}

// configTestEnv sets, in the process environment, every variable any
// function reads (as the template's Globals once gave every function),
// with the secrets behind a fake Secrets Manager, and returns it.
func configTestEnv(t *testing.T) (*fakeSecrets, map[string]string) {
	t.Helper()
	sm := &fakeSecrets{values: map[string]string{testAdminKeyARN: testAdminKey, testIssuerSecretARN: testIssuerSecret,
		testOperatorTokenARN: testOperatorToken, testIssuerKeyARN: testIssuerKey, testDashboardKeyARN: testDashboardKey}}
	srv := httptest.NewServer(sm)
	t.Cleanup(srv.Close)
	env := map[string]string{
		"METRICS_NAMESPACE":                 "payments/test",
		"STAGE":                             "test",
		"ALARM_EMAIL":                       "ops@example.com",
		"OUTBOUND_ALLOW_LOOPBACK":           "",
		"WEBHOOK_KEY":                       "",
		"MODE":                              function.ModeSandbox,
		"TABLE_NAME":                        "payments-test",
		"AUDIT_TABLE_NAME":                  "payments-test-audit",
		"PAYOUTS_QUEUE_URL":                 "https://sqs.us-east-1.amazonaws.com/000000000000/payments-test-payouts",
		"BULK_PAYOUTS_QUEUE_URL":            "https://sqs.us-east-1.amazonaws.com/000000000000/payments-test-bulk-payouts",
		"WEBHOOKS_QUEUE_URL":                "https://sqs.us-east-1.amazonaws.com/000000000000/payments-test-webhooks",
		"ISSUER_EVENTS_QUEUE_URL":           "https://sqs.us-east-1.amazonaws.com/000000000000/payments-test-issuer-events",
		"FUNDS_QUEUE_URL":                   "https://sqs.us-east-1.amazonaws.com/000000000000/payments-test-funds",
		"DOCUMENTS_BUCKET":                  "payments-test-documents",
		"USER_POOL_ID":                      "us-east-1_TestPool1",
		"USER_POOL_CLIENT_ID":               "4test0dashboard0client0id",
		"TOKEN_TTL_SECONDS":                 "600",
		"TOKEN_RATE_LIMIT":                  "7",
		"REVEAL_LIMIT_PER_HOUR":             "50",
		"RATE_LIMIT_READ":                   "40/80",
		"RATE_LIMIT_MONEY":                  "8/16",
		"RATE_LIMIT_REVEAL":                 "2/4",
		"PAYMENT_DEADLINE_SECONDS":          "20",
		"CARD_HOLD_EXPIRY_SECONDS":          "3600",
		"RECONCILIATION_FIRST_WINDOW_HOURS": "48",
		"ISSUER_DECISION_DEADLINE_MS":       "1500",
		"ADMIN_CREDIT_IN_PRODUCTION":        "true",
		"TOKEN_KEY_A_ARN":                   testTokenKeyAARN,
		"TOKEN_KEY_B_ARN":                   testTokenKeyBARN,
		"TOKEN_SIGNING_KEY":                 "b",
		"TOKEN_STANDBY_KEY":                 "refused",
		"TOKEN_ISSUER":                      testTokenIssuer,
		"ADMIN_API_KEY_ARN":                 testAdminKeyARN,
		"DASHBOARD_SESSION_KEY_ARN":         testDashboardKeyARN,
		"DASHBOARD_SESSION_KEY":             "",
		"CARD_KEY_ARN":                      testCardKeyARN,
		"WEBHOOK_KEY_ARN":                   testWebhookKeyARN,
		"ISSUER_WEBHOOK_SECRET_ARN":         testIssuerSecretARN,
		"OPERATOR_API_TOKEN_ARN":            testOperatorTokenARN,
		"OPERATOR_BASE_URL":                 testOperatorURL,
		"ISSUER_API_KEY_ARN":                testIssuerKeyARN,
		"ISSUER_BASE_URL":                   testIssuerURL,
		"ISSUER_API_KEY":                    "",
		"OPERATOR_CALLBACK_PUBLIC_KEY":      testOperatorKey,
		"OPERATOR_API_TOKEN":                "",
		"CARD_KEY":                          "",
		"TOKEN_KEY_A":                       "",
		"TOKEN_KEY_B":                       "",
		"ADMIN_API_KEY":                     "",
		"ISSUER_WEBHOOK_SECRET":             "",
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	none := filepath.Join(t.TempDir(), "none")
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": srv.URL, "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_CONFIG_FILE": none, "AWS_SHARED_CREDENTIALS_FILE": none,
	} {
		t.Setenv(k, v)
	}
	return sm, env
}

// loadConfig is function.ConfigFromEnv for the function name, reading
// secrets as its main does, its AWS calls recorded.
func loadConfig(name string) (function.Config, error) {
	names := map[string]string{}
	for _, v := range []string{"ADMIN_API_KEY_ARN", "ISSUER_WEBHOOK_SECRET_ARN", "OPERATOR_API_TOKEN_ARN", "ISSUER_API_KEY_ARN", "DASHBOARD_SESSION_KEY_ARN"} {
		names[os.Getenv(v)] = v
	}
	return function.ConfigFromEnv(context.Background(), name, func(cfg aws.Config, endpoint string) function.SecretReader {
		cfg.APIOptions = append(slices.Clone(cfg.APIOptions), apptest.RecordCalls(name, names))
		return secrets.New(cfg, endpoint)
	})
}

// TestConfigReadsOnlyWhatTheFunctionUses starts every function in an
// environment holding every setting of every function: each reads only its
// own settings and fetches only its own secrets.
func TestConfigReadsOnlyWhatTheFunctionUses(t *testing.T) {
	sm, env := configTestEnv(t)
	table, payouts, webhooks := env["TABLE_NAME"], env["PAYOUTS_QUEUE_URL"], env["WEBHOOKS_QUEUE_URL"]
	bulkPayouts := env["BULK_PAYOUTS_QUEUE_URL"]
	// Every function that signs or checks tokens reads the same settings.
	tokens := func(c function.Config) function.Config {
		c.TokenKeyARNs = [2]string{testTokenKeyAARN, testTokenKeyBARN}
		c.TokenSigningKey, c.TokenStandbyRefused, c.TokenIssuer = 1, true, testTokenIssuer
		return c
	}
	lim := limits.Limits{Read: limits.Limit{Rate: 40, Burst: 80}, Money: limits.Limit{Rate: 8, Burst: 16}, Reveal: limits.Limit{Rate: 2, Burst: 4}}
	tests := []struct {
		function string
		want     function.Config
		secrets  []string
	}{
		{"auth", tokens(function.Config{Mode: function.ModeSandbox, TableName: table, TokenTTL: 10 * time.Minute, TokenRateLimit: 7}), nil},
		{"admin", function.Config{Mode: function.ModeSandbox, TableName: table, AuditTableName: env["AUDIT_TABLE_NAME"], WebhooksQueueURL: webhooks, DocumentsBucket: env["DOCUMENTS_BUCKET"], AdminAPIKey: testAdminKey, AdminCreditInProduction: true,
			ReconciliationFirstWindow: 48 * time.Hour, OperatorBaseURL: testOperatorURL, IssuerBaseURL: testIssuerURL, WebhookKeyARN: testWebhookKeyARN,
			UserPoolID: env["USER_POOL_ID"], UserPoolClientID: env["USER_POOL_CLIENT_ID"]}, []string{testAdminKeyARN}},
		{"wallets", tokens(function.Config{Mode: function.ModeSandbox, TableName: table, WebhooksQueueURL: webhooks, FundsQueueURL: env["FUNDS_QUEUE_URL"], CompanyLimits: lim}), nil},
		{"payments", tokens(function.Config{Mode: function.ModeSandbox, TableName: table, PayoutsQueueURL: payouts, BulkPayoutsQueueURL: bulkPayouts, OperatorBaseURL: testOperatorURL, CompanyLimits: lim}), nil},
		{"webhooks", tokens(function.Config{Mode: function.ModeSandbox, TableName: table, WebhooksQueueURL: webhooks, WebhookKeyARN: testWebhookKeyARN, CompanyLimits: lim}), nil},
		{"customers", tokens(function.Config{Mode: function.ModeSandbox, TableName: table, WebhooksQueueURL: webhooks, DocumentsBucket: env["DOCUMENTS_BUCKET"], IssuerBaseURL: testIssuerURL, CompanyLimits: lim}), nil},
		{"payout-worker", function.Config{Mode: function.ModeSandbox, TableName: table, PayoutsQueueURL: payouts, BulkPayoutsQueueURL: bulkPayouts, WebhooksQueueURL: webhooks, PaymentDeadline: 20 * time.Second, OperatorBaseURL: testOperatorURL}, nil},
		{"operator-callbacks", function.Config{Mode: function.ModeSandbox, PayoutsQueueURL: payouts, OperatorCallbackKey: testOperatorKey}, nil},
		{"webhook-worker", function.Config{TableName: table, WebhooksQueueURL: webhooks, WebhookKeyARN: testWebhookKeyARN}, nil},
		{"card-worker", function.Config{Mode: function.ModeSandbox, TableName: table, WebhooksQueueURL: webhooks}, nil},
		{"fund-worker", function.Config{Mode: function.ModeSandbox, TableName: table, WebhooksQueueURL: webhooks}, nil},
		{"sweeper", function.Config{Mode: function.ModeSandbox, TableName: table, PayoutsQueueURL: payouts, BulkPayoutsQueueURL: bulkPayouts, WebhooksQueueURL: webhooks, CardKeyARN: testCardKeyARN, CardHoldExpiry: time.Hour,
			IssuerEventsQueueURL: env["ISSUER_EVENTS_QUEUE_URL"], IssuerWebhookSecret: []byte(testIssuerSecret), IssuerBaseURL: testIssuerURL,
			ReconciliationFirstWindow: 48 * time.Hour, OperatorBaseURL: testOperatorURL, WebhookKeyARN: testWebhookKeyARN}, []string{testIssuerSecretARN}},
		{"cards", tokens(function.Config{Mode: function.ModeSandbox, TableName: table, WebhooksQueueURL: webhooks, CardKeyARN: testCardKeyARN, IssuerBaseURL: testIssuerURL, RevealLimit: 50, CompanyLimits: lim}),
			nil},
		{"stripe-webhooks", function.Config{Mode: function.ModeSandbox, TableName: table, IssuerEventsQueueURL: env["ISSUER_EVENTS_QUEUE_URL"],
			IssuerWebhookSecret: []byte(testIssuerSecret), IssuerBaseURL: testIssuerURL}, []string{testIssuerSecretARN}},
		{"card-network", tokens(function.Config{Mode: function.ModeSandbox, TableName: table, WebhooksQueueURL: webhooks,
			IssuerEventsQueueURL: env["ISSUER_EVENTS_QUEUE_URL"], IssuerWebhookSecret: []byte(testIssuerSecret), IssuerDecisionDeadline: 1500 * time.Millisecond, CompanyLimits: lim}),
			[]string{testIssuerSecretARN}},
		{"openapi", function.Config{}, nil},
		{"dashboard", function.Config{Mode: function.ModeSandbox, TableName: table, DashboardSessionKey: testDashboardKey,
			UserPoolID: env["USER_POOL_ID"], UserPoolClientID: env["USER_POOL_CLIENT_ID"], PayoutsQueueURL: payouts, BulkPayoutsQueueURL: bulkPayouts,
			OperatorBaseURL: testOperatorURL, IssuerBaseURL: testIssuerURL, WebhooksQueueURL: webhooks, WebhookKeyARN: testWebhookKeyARN}, []string{testDashboardKeyARN}},
		{"issuer-authorizations", function.Config{TableName: table, IssuerWebhookSecret: []byte(testIssuerSecret)}, []string{testIssuerSecretARN}},
		{"issuer-webhooks", function.Config{IssuerEventsQueueURL: env["ISSUER_EVENTS_QUEUE_URL"], IssuerWebhookSecret: []byte(testIssuerSecret)}, []string{testIssuerSecretARN}},
		{"deploy-check", function.Config{}, nil},
	}
	tested := map[string]bool{}
	for _, tt := range tests {
		tested[tt.function] = true
		t.Run(tt.function, func(t *testing.T) {
			// Every function's (function.CommonSettings).
			tt.want.MetricsNamespace, tt.want.Stage, tt.want.AlarmEmail, tt.want.Mode = env["METRICS_NAMESPACE"], env["STAGE"], env["ALARM_EMAIL"], env["MODE"]
			got, err := loadConfig(tt.function)
			if err != nil {
				t.Fatal(err)
			}
			region := "us-east-1"
			if len(function.Functions[tt.function].Grants) == 0 {
				region = "" // it calls no AWS service
			}
			if got.AWS.Region != region {
				t.Errorf("AWS region %q, want %q", got.AWS.Region, region)
			}
			got.AWS, got.DynamoDBEndpoint, got.SQSEndpoint, got.S3Endpoint, got.KMSEndpoint, got.SecretsEndpoint = aws.Config{}, "", "", "", "", ""
			got.CognitoEndpoint = ""
			got.CodeDeployEndpoint, got.LambdaEndpoint = "", ""
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("config\n got %+v\nwant %+v", got, tt.want)
			}
			if asked := sm.takeAsked(); !slices.Equal(asked, tt.secrets) {
				t.Errorf("asked Secrets Manager for %v, want %v", asked, tt.secrets)
			}
		})
	}
	for _, name := range slices.Sorted(maps.Keys(function.Functions)) {
		if !tested[name] {
			t.Errorf("%s: no case here", name)
		}
	}
}

// TestConfigRefusesAMissingSetting unsets, one at a time, each variable
// naming a resource or secret that a function uses: it does not start, and
// the error names the variable. Settings with a default fall back to it.
func TestConfigRefusesAMissingSetting(t *testing.T) {
	for _, name := range slices.Sorted(maps.Keys(function.Functions)) {
		fn := function.Functions[name]
		for _, v := range fn.Variables() {
			if slices.Contains(fn.Settings, v) || slices.Contains(function.CommonSettings, v) {
				continue
			}
			t.Run(name+" without "+v, func(t *testing.T) {
				configTestEnv(t)
				t.Setenv("MODE", function.ModeProduction) // where every variable is read
				if v == "CARD_KEY_ARN" {
					t.Setenv("MODE", function.ModeSandbox) // production holds no card secret
				}
				t.Setenv(v, "")
				_, err := loadConfig(name)
				if !errors.Is(err, function.ErrConfig) || !strings.Contains(err.Error(), v+" is not set") {
					t.Fatalf("error %v, want function.ErrConfig naming %s", err, v)
				}
			})
		}
	}
	t.Run("defaults", func(t *testing.T) {
		configTestEnv(t)
		for _, k := range []string{"METRICS_NAMESPACE", "MODE", "TOKEN_TTL_SECONDS", "TOKEN_RATE_LIMIT", "PAYMENT_DEADLINE_SECONDS", "ADMIN_CREDIT_IN_PRODUCTION", "CARD_HOLD_EXPIRY_SECONDS",
			"RECONCILIATION_FIRST_WINDOW_HOURS", "REVEAL_LIMIT_PER_HOUR", "RATE_LIMIT_READ", "RATE_LIMIT_MONEY", "RATE_LIMIT_REVEAL"} {
			t.Setenv(k, "")
		}
		cfg, err := loadConfig("auth")
		if err != nil || cfg.Mode != function.ModeSandbox || cfg.TokenTTL != time.Hour || cfg.TokenRateLimit != 10 || cfg.MetricsNamespace != function.DefaultMetricsNamespace {
			t.Fatalf("config %+v, %v", cfg, err)
		}
		if cfg, err := loadConfig("payout-worker"); err != nil || cfg.PaymentDeadline != 15*time.Minute {
			t.Fatalf("config %+v, %v", cfg, err)
		}
		if cfg, err := loadConfig("sweeper"); err != nil || cfg.CardHoldExpiry != 7*24*time.Hour || cfg.ReconciliationFirstWindow != 24*time.Hour {
			t.Fatalf("config %+v, %v", cfg, err)
		}
		if cfg, err := loadConfig("admin"); err != nil || cfg.AdminCreditInProduction {
			t.Fatalf("config %+v, %v", cfg, err)
		}
		if cfg, err := loadConfig("cards"); err != nil || cfg.RevealLimit != 100 || cfg.CompanyLimits != limits.Defaults {
			t.Fatalf("config %+v, %v", cfg, err)
		}
	})
}

// TestConfigOfProductionMode: in production mode the functions that call
// the aggregator read its base URL and fetch its token, the callbacks
// function needs its key; a missing URL or key, a malformed URL or the
// stack's placeholder token keeps the function from starting.
func TestConfigOfProductionMode(t *testing.T) {
	sm, _ := configTestEnv(t)
	t.Setenv("MODE", function.ModeProduction)
	// The admin function reads both providers' records for the
	// reconciliation (docs/reconciliation.md); the dashboard makes payouts.
	for _, name := range []string{"payments", "payout-worker", "admin", "dashboard"} {
		cfg, err := loadConfig(name)
		if err != nil || cfg.OperatorBaseURL != testOperatorURL || cfg.OperatorAPIToken != testOperatorToken {
			t.Fatalf("%s: config %+v, %v", name, cfg, err)
		}
		if asked := sm.takeAsked(); !slices.Contains(asked, testOperatorTokenARN) {
			t.Errorf("%s asked Secrets Manager for %v, not the operator's token", name, asked)
		}
	}
	if cfg, err := loadConfig("operator-callbacks"); err != nil || cfg.OperatorCallbackKey != testOperatorKey {
		t.Fatalf("operator-callbacks: config %+v, %v", cfg, err)
	}
	// The issuer keeps the card secrets: the stack gives no card key.
	t.Run("no card key", func(t *testing.T) {
		t.Setenv("CARD_KEY_ARN", "")
		for _, name := range []string{"cards", "sweeper"} {
			if cfg, err := loadConfig(name); err != nil || cfg.CardKeyARN != "" || cfg.CardKey != "" {
				t.Fatalf("%s: config %+v, %v", name, cfg, err)
			}
			sm.takeAsked()
		}
	})
	for _, name := range []string{"cards", "customers", "sweeper", "stripe-webhooks", "admin", "dashboard"} {
		cfg, err := loadConfig(name)
		if err != nil || cfg.IssuerBaseURL != testIssuerURL || cfg.IssuerAPIKey != testIssuerKey {
			t.Fatalf("%s: config %+v, %v", name, cfg, err)
		}
		if asked := sm.takeAsked(); !slices.Contains(asked, testIssuerKeyARN) {
			t.Errorf("%s asked Secrets Manager for %v, not the issuer's API key", name, asked)
		}
	}
	tests := []struct {
		name, function, variable, value, want string
	}{
		{"no base URL", "payout-worker", "OPERATOR_BASE_URL", "", "OPERATOR_BASE_URL is not set"},
		{"base URL not http", "payments", "OPERATOR_BASE_URL", "api.pawapay.io", `OPERATOR_BASE_URL must be an http(s) URL, not "api.pawapay.io"`},
		{"no callback key", "operator-callbacks", "OPERATOR_CALLBACK_PUBLIC_KEY", "", "OPERATOR_CALLBACK_PUBLIC_KEY is not set"},
		{"placeholder token", "payout-worker", "OPERATOR_API_TOKEN", function.SecretPlaceholder, "still holds the stack's placeholder"},
		{"placeholder issuer key", "cards", "ISSUER_API_KEY", function.SecretPlaceholder, "ISSUER_API_KEY_ARN still holds the stack's placeholder"},
		{"issuer URL not http", "stripe-webhooks", "ISSUER_BASE_URL", "api.stripe.com", `ISSUER_BASE_URL must be an http(s) URL, not "api.stripe.com"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(tt.variable, tt.value)
			if tt.variable == "OPERATOR_API_TOKEN" || tt.variable == "ISSUER_API_KEY" {
				// A secret by value: the local stack's (a deployed one
				// refuses it, TestConfigOfDeployedProduction).
				t.Setenv(tt.variable+"_ARN", "")
				t.Setenv("STAGE", function.LocalStage)
			}
			_, err := loadConfig(tt.function)
			if !errors.Is(err, function.ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want function.ErrConfig with %q", err, tt.want)
			}
		})
	}
}

// TestConfigRefusesBadValues: a malformed setting, an unreadable secret or
// an unknown function is a configuration error naming what is wrong.
func TestConfigRefusesBadValues(t *testing.T) {
	tests := []struct {
		name, function, variable, value, want string
	}{
		{"mode", "payments", "MODE", "live", `MODE must be sandbox or production, not "live"`},
		{"ttl", "auth", "TOKEN_TTL_SECONDS", "1h", `TOKEN_TTL_SECONDS must be a positive integer, not "1h"`},
		{"rate limit", "auth", "TOKEN_RATE_LIMIT", "0", `TOKEN_RATE_LIMIT must be a positive integer, not "0"`},
		{"deadline", "payout-worker", "PAYMENT_DEADLINE_SECONDS", "15m", `PAYMENT_DEADLINE_SECONDS must be a positive integer, not "15m"`},
		{"hold expiry", "sweeper", "CARD_HOLD_EXPIRY_SECONDS", "0", `CARD_HOLD_EXPIRY_SECONDS must be a positive integer, not "0"`},
		{"decision deadline past the function's time", "card-network", "ISSUER_DECISION_DEADLINE_MS", "25001", `ISSUER_DECISION_DEADLINE_MS must be at most 25000, within the card-network function's time, not 25001`},
		{"deadline past the window", "payout-worker", "PAYMENT_DEADLINE_SECONDS", "259201", `PAYMENT_DEADLINE_SECONDS must be at most 259200`},
		{"company limit", "payments", "RATE_LIMIT_MONEY", "10", `RATE_LIMIT_MONEY must be rate/burst, two positive integers ("50/100"), not "10"`},
		{"company limit of 0", "cards", "RATE_LIMIT_REVEAL", "0/5", `RATE_LIMIT_REVEAL must be rate/burst`},
		{"console credit", "admin", "ADMIN_CREDIT_IN_PRODUCTION", "yes", `ADMIN_CREDIT_IN_PRODUCTION must be true or false, not "yes"`},
		{"secret", "card-network", "ISSUER_WEBHOOK_SECRET_ARN", testIssuerSecretARN + "-gone", "read secret " + testIssuerSecretARN + "-gone"},
		{"no token key", "wallets", "TOKEN_KEY_B_ARN", "", "TOKEN_KEY_B_ARN is not set (nor TOKEN_KEY_B, a local key)"},
		{"signing key", "auth", "TOKEN_SIGNING_KEY", "c", `TOKEN_SIGNING_KEY must be a or b, not "c"`},
		{"standby key", "cards", "TOKEN_STANDBY_KEY", "no", `TOKEN_STANDBY_KEY must be accepted or refused, not "no"`},
		{"issuer", "payments", "TOKEN_ISSUER", "https://api.example.com/api/v1/", "TOKEN_ISSUER must be an http(s) URL without a trailing slash"},
		{"function", "no-such-function", "", "", `no function "no-such-function"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configTestEnv(t)
			if tt.variable != "" {
				t.Setenv(tt.variable, tt.value)
			}
			_, err := loadConfig(tt.function)
			if !errors.Is(err, function.ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want function.ErrConfig with %q", err, tt.want)
			}
		})
	}
}

// TestConfigTakesLocalSecrets: where the local stack sets NAME instead of
// NAME_ARN, the value is taken as is and Secrets Manager is not called; a
// local token key stands for the KMS key.
func TestConfigTakesLocalSecrets(t *testing.T) {
	sm, _ := configTestEnv(t)
	t.Setenv("ADMIN_API_KEY_ARN", "")
	t.Setenv("ADMIN_API_KEY", "local-admin-key")
	cfg, err := loadConfig("admin")
	if err != nil || cfg.AdminAPIKey != "local-admin-key" {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	if asked := sm.takeAsked(); len(asked) != 0 {
		t.Fatalf("asked Secrets Manager for %v", asked)
	}
	t.Setenv("TOKEN_KEY_A_ARN", "")
	t.Setenv("TOKEN_KEY_A", "11")
	t.Setenv("TOKEN_SIGNING_KEY", "")
	t.Setenv("TOKEN_STANDBY_KEY", "")
	cfg, err = loadConfig("webhooks")
	if err != nil || cfg.TokenKeys != [2]string{"11", ""} || cfg.TokenKeyARNs != [2]string{"", testTokenKeyBARN} ||
		cfg.TokenSigningKey != 0 || cfg.TokenStandbyRefused {
		t.Fatalf("config %+v, %v", cfg, err)
	}
}

// TestConfigOfDeployedProduction: a deployed stage (STAGE other than
// local) in production mode refuses at start an http provider URL, loopback
// receivers, a secret given by value and no alarm e-mail, with an error
// naming the setting; the local stack in production mode (STAGE=local,
// simulated providers on http://127.0.0.1, secrets by value from .cache)
// and a deployed sandbox stage start as before.
func TestConfigOfDeployedProduction(t *testing.T) {
	type setting struct{ name, value string }
	tests := []struct {
		name     string
		function string
		mode     string
		set      []setting
		want     string // "" starts
	}{
		{"deployed, every setting safe", "payments", function.ModeProduction, nil, ""},
		{"operator URL over http", "payments", function.ModeProduction,
			[]setting{{"OPERATOR_BASE_URL", "http://api.pawapay.io"}}, `OPERATOR_BASE_URL must be an https URL, not "http://api.pawapay.io"`},
		{"issuer URL over http", "cards", function.ModeProduction,
			[]setting{{"ISSUER_BASE_URL", "http://api.stripe.com"}}, `ISSUER_BASE_URL must be an https URL, not "http://api.stripe.com"`},
		{"provider URL over http, in a function that does not read it", "auth", function.ModeProduction,
			[]setting{{"ISSUER_BASE_URL", "http://127.0.0.1:12111"}}, "ISSUER_BASE_URL must be an https URL"},
		{"loopback receivers", "webhook-worker", function.ModeProduction,
			[]setting{{"OUTBOUND_ALLOW_LOOPBACK", "true"}}, "OUTBOUND_ALLOW_LOOPBACK must not be set"},
		{"loopback receivers, another true", "webhooks", function.ModeProduction,
			[]setting{{"OUTBOUND_ALLOW_LOOPBACK", "1"}}, "OUTBOUND_ALLOW_LOOPBACK must not be set"},
		{"no alarm e-mail", "sweeper", function.ModeProduction,
			[]setting{{"ALARM_EMAIL", ""}}, "ALARM_EMAIL is not set"},
		{"no alarm e-mail, in a function without a secret", "openapi", function.ModeProduction,
			[]setting{{"ALARM_EMAIL", ""}}, "ALARM_EMAIL is not set"},
		{"deployed sandbox stage", "payments", function.ModeSandbox,
			[]setting{{"OPERATOR_BASE_URL", "http://127.0.0.1:1"}, {"OUTBOUND_ALLOW_LOOPBACK", "true"}, {"ALARM_EMAIL", ""}}, ""},
		{"the local stack in production mode", "payments", function.ModeProduction, []setting{
			{"STAGE", function.LocalStage}, {"OPERATOR_BASE_URL", "http://127.0.0.1:5070"}, {"ISSUER_BASE_URL", "http://127.0.0.1:5071"},
			{"OUTBOUND_ALLOW_LOOPBACK", "true"}, {"ALARM_EMAIL", ""},
			{"TOKEN_KEY_A_ARN", ""}, {"TOKEN_KEY_A", apptest.AuthTestKeys[0]}, {"OPERATOR_API_TOKEN_ARN", ""}, {"OPERATOR_API_TOKEN", testOperatorToken},
			{"CARD_KEY", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"},
		}, ""},
		{"a configuration without a stage (tests)", "payments", function.ModeProduction,
			[]setting{{"STAGE", ""}, {"OUTBOUND_ALLOW_LOOPBACK", "true"}, {"ALARM_EMAIL", ""}}, ""},
	}
	// Every secret given by value, in a function that reads it and in one
	// that does not.
	for _, name := range function.PlainSecrets {
		for _, fn := range []string{"sweeper", "openapi"} {
			tests = append(tests, struct {
				name     string
				function string
				mode     string
				set      []setting
				want     string
			}{name + " by value in " + fn, fn, function.ModeProduction, []setting{{name, "by-value-0123456789abcdef"}},
				name + " must not be set: a deployed stack reads the secret from " + name + "_ARN"})
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configTestEnv(t)
			t.Setenv("MODE", tt.mode)
			for _, s := range tt.set {
				t.Setenv(s.name, s.value)
			}
			cfg, err := loadConfig(tt.function)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if cfg.Mode != tt.mode {
					t.Fatalf("mode %q, want %q", cfg.Mode, tt.mode)
				}
				return
			}
			if !errors.Is(err, function.ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want function.ErrConfig with %q", err, tt.want)
			}
		})
	}
}
