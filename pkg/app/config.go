package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"payments/pkg/payments"
)

// Modes a deployment runs in; a token is bound to one.
const (
	ModeSandbox    = "sandbox"
	ModeProduction = "production"
)

// Config is what a function reads from its environment. In AWS the template
// sets these variables; locally the dev server does.
type Config struct {
	Stage            string        // STAGE: dev, staging, prod, local
	Mode             string        // MODE: sandbox or production
	TableName        string        // TABLE_NAME
	PayoutsQueueURL  string        // PAYOUTS_QUEUE_URL
	WebhooksQueueURL string        // WEBHOOKS_QUEUE_URL
	TokenTTL         time.Duration // TOKEN_TTL_SECONDS, default 3600
	TokenRateLimit   int           // TOKEN_RATE_LIMIT: token requests per minute per IP, default 10
	PaymentDeadline  time.Duration // PAYMENT_DEADLINE_SECONDS: when an unconfirmed payment is flagged for reconciliation, default 900
	// AdminCreditInProduction (ADMIN_CREDIT_IN_PRODUCTION=true) lets the
	// operator console credit wallets in production mode.
	AdminCreditInProduction bool
	TokenSecret             []byte // TOKEN_SECRET, or the secret named by TOKEN_SECRET_ARN
	AdminAPIKey             string // ADMIN_API_KEY, or the secret named by ADMIN_API_KEY_ARN
	DynamoDBEndpoint        string // AWS_ENDPOINT_URL_DYNAMODB: DynamoDB Local
	SQSEndpoint             string // AWS_ENDPOINT_URL_SQS: the SQS emulator
	AWS                     aws.Config
}

// ErrConfig reports a missing or malformed setting.
var ErrConfig = errors.New("app: configuration")

// ConfigFromEnv reads Config from the environment, fetching the secrets
// named by *_ARN variables from Secrets Manager.
func ConfigFromEnv(ctx context.Context) (Config, error) {
	c := Config{
		Stage:            os.Getenv("STAGE"),
		Mode:             envOr("MODE", ModeSandbox),
		TableName:        os.Getenv("TABLE_NAME"),
		PayoutsQueueURL:  os.Getenv("PAYOUTS_QUEUE_URL"),
		WebhooksQueueURL: os.Getenv("WEBHOOKS_QUEUE_URL"),
		TokenSecret:      []byte(os.Getenv("TOKEN_SECRET")),
		AdminAPIKey:      os.Getenv("ADMIN_API_KEY"),
		DynamoDBEndpoint: os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"),
		SQSEndpoint:      os.Getenv("AWS_ENDPOINT_URL_SQS"),
	}
	if c.Mode != ModeSandbox && c.Mode != ModeProduction {
		return c, fmt.Errorf("%w: MODE must be %s or %s, not %q", ErrConfig, ModeSandbox, ModeProduction, c.Mode)
	}
	if c.TableName == "" {
		return c, fmt.Errorf("%w: TABLE_NAME is not set", ErrConfig)
	}
	ttl, err := envInt("TOKEN_TTL_SECONDS", 3600)
	if err != nil {
		return c, err
	}
	c.TokenTTL = time.Duration(ttl) * time.Second
	if c.TokenRateLimit, err = envInt("TOKEN_RATE_LIMIT", 10); err != nil {
		return c, err
	}
	deadline, err := envInt("PAYMENT_DEADLINE_SECONDS", int(payments.DefaultDeadline/time.Second))
	if err != nil {
		return c, err
	}
	c.PaymentDeadline = time.Duration(deadline) * time.Second
	switch v := os.Getenv("ADMIN_CREDIT_IN_PRODUCTION"); v {
	case "", "false":
	case "true":
		c.AdminCreditInProduction = true
	default:
		return c, fmt.Errorf("%w: ADMIN_CREDIT_IN_PRODUCTION must be true or false, not %q", ErrConfig, v)
	}
	if c.AWS, err = awsconfig.LoadDefaultConfig(ctx); err != nil {
		return c, fmt.Errorf("%w: load AWS configuration: %v", ErrConfig, err)
	}
	sm := secretsmanager.NewFromConfig(c.AWS)
	if arn := os.Getenv("TOKEN_SECRET_ARN"); arn != "" {
		s, err := secretValue(ctx, sm, arn)
		if err != nil {
			return c, err
		}
		c.TokenSecret = []byte(s)
	}
	if arn := os.Getenv("ADMIN_API_KEY_ARN"); arn != "" {
		if c.AdminAPIKey, err = secretValue(ctx, sm, arn); err != nil {
			return c, err
		}
	}
	return c, nil
}

func secretValue(ctx context.Context, sm *secretsmanager.Client, arn string) (string, error) {
	out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return "", fmt.Errorf("%w: read secret %s: %v", ErrConfig, arn, err)
	}
	return aws.ToString(out.SecretString), nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envInt(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%w: %s must be a positive integer, not %q", ErrConfig, name, v)
	}
	return n, nil
}
