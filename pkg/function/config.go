package function

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"payments/pkg/limits"
)

// Modes a deployment runs in; a token is bound to one. The providers of
// each are chosen by providers.ForMode, whose names of the modes these are
// (a test holds them equal: the configuration links no provider).
const (
	ModeSandbox    = "sandbox"
	ModeProduction = "production"
)

// The defaults of the settings whose rule belongs to a domain package. They
// are the domain's own (payments.DefaultDeadline, payments.ReconcileWindow,
// cards.DefaultHoldExpiry, reconcile.DefaultFirstWindow,
// issuer.DefaultDecisionDeadline), repeated here so that reading the
// configuration links none of those packages; a test holds each equal to
// the domain's.
const (
	DefaultPaymentDeadline           = 15 * time.Minute
	MaxPaymentDeadline               = 72 * time.Hour
	DefaultCardHoldExpiry            = 7 * 24 * time.Hour
	DefaultReconciliationFirstWindow = 24 * time.Hour
	DefaultIssuerDecisionDeadline    = 2 * time.Second
)

// MaxIssuerDecisionDeadline bounds ISSUER_DECISION_DEADLINE_MS: the
// card-network function (29 s) must outlive the network's wait, to apply
// its decline and answer.
const MaxIssuerDecisionDeadline = 25 * time.Second

// Config is what a function reads from its environment. In AWS the template
// sets these variables; locally the dev server does. ConfigFromEnv fills in
// only the fields of the variables the function uses (Functions).
type Config struct {
	Mode      string // MODE: sandbox or production
	TableName string // TABLE_NAME
	// AuditTableName (AUDIT_TABLE_NAME) is the operators' audit trail's
	// table (pkg/audit), which the admin function adds to and reads.
	AuditTableName   string
	PayoutsQueueURL  string // PAYOUTS_QUEUE_URL
	WebhooksQueueURL string // WEBHOOKS_QUEUE_URL
	DocumentsBucket  string // DOCUMENTS_BUCKET: identity documents
	// UserPoolID (USER_POOL_ID) and UserPoolClientID (USER_POOL_CLIENT_ID)
	// are the company dashboard's user pool and its app client
	// (docs/dashboard.md): Cognito's in AWS, cognito-local's locally.
	UserPoolID, UserPoolClientID string
	TokenTTL                     time.Duration // TOKEN_TTL_SECONDS, default 3600
	TokenRateLimit               int           // TOKEN_RATE_LIMIT: token requests per minute per IP, default 10
	RevealLimit                  int           // REVEAL_LIMIT_PER_HOUR: card reveals per company in any hour, default 100
	// CompanyLimits are each company's request limits by route class:
	// RATE_LIMIT_READ, RATE_LIMIT_MONEY and RATE_LIMIT_REVEAL, each
	// "rate/burst" (requests a second / the bucket's capacity), by default
	// limits.Defaults.
	CompanyLimits   limits.Limits
	PaymentDeadline time.Duration // PAYMENT_DEADLINE_SECONDS: when an unconfirmed payment is flagged for reconciliation, default 900
	// BulkPayoutsQueueURL (BULK_PAYOUTS_QUEUE_URL) is the queue of the
	// bulk batches' work: their chunk jobs and their items' submissions and
	// polls, which the payout worker consumes apart from the payouts queue
	// (docs/bulk.md).
	BulkPayoutsQueueURL string
	// MetricsNamespace (METRICS_NAMESPACE, every function's: the template
	// gives "payments/<stage>" in its Globals) is the CloudWatch namespace
	// of the function's metrics. Unset, it is DefaultMetricsNamespace:
	// metrics never keep a function from starting.
	MetricsNamespace string
	// Stage (STAGE, every function's: the template gives its Stage
	// parameter in its Globals; the local stack's is LocalStage) names the
	// deployment. A stage other than LocalStage is a deployed one, which
	// in production mode refuses what is only safe locally (Deployed).
	Stage string
	// AlarmEmail (ALARM_EMAIL, every function's: the template's
	// AlarmEmail parameter) is where the stage's alarms are sent; a
	// deployed production stage refuses to start without one.
	AlarmEmail string
	// CardHoldExpiry (CARD_HOLD_EXPIRY_SECONDS, default 604800: 7 days) is
	// how long a card hold may stay neither settled nor reversed before
	// the sweeper releases it.
	CardHoldExpiry time.Duration
	// ReconciliationFirstWindow (RECONCILIATION_FIRST_WINDOW_HOURS,
	// default 24) is how far back a provider's first reconciliation starts
	// (pkg/reconcile); each later one starts where the last completed one
	// ended.
	ReconciliationFirstWindow time.Duration
	// IssuerDecisionDeadline (ISSUER_DECISION_DEADLINE_MS, default 2000,
	// at most MaxIssuerDecisionDeadline) is how long the sandbox card
	// network waits for our decision on an authorization before it declines
	// on its own.
	IssuerDecisionDeadline time.Duration
	// IssuerEventsQueueURL (ISSUER_EVENTS_QUEUE_URL) is the queue of the
	// card issuer's notifications, which the card-worker consumes.
	IssuerEventsQueueURL string
	// FundsQueueURL (FUNDS_QUEUE_URL) is the queue of the sandbox bank's
	// answers about declared fundings, which the fund-worker consumes.
	FundsQueueURL string
	// AdminCreditInProduction (ADMIN_CREDIT_IN_PRODUCTION=true) lets the
	// operator console credit wallets in production mode.
	AdminCreditInProduction bool
	// CardKeyARN (CARD_KEY_ARN) is the KMS key that seals card secrets in
	// AWS; locally CardKey (CARD_KEY) is a 64-hex-character key instead.
	// Both are empty in production mode, where no card secret is held.
	CardKeyARN, CardKey string
	// TokenKeyARNs (TOKEN_KEY_A_ARN, TOKEN_KEY_B_ARN) are the two KMS
	// keys (ECC_NIST_P256, SIGN_VERIFY) that tokens are signed with, one
	// at a time (TokenSigningKey); locally TokenKeys (TOKEN_KEY_A,
	// TOKEN_KEY_B) are P-256 private keys instead, 64 hexadecimal
	// characters each (auth.LocalKeyFromHex). See docs/auth.md.
	TokenKeyARNs, TokenKeys [2]string
	// TokenSigningKey (TOKEN_SIGNING_KEY: a or b, default a) is the slot
	// of the key that signs: 0 for a, 1 for b. The other, the standby key,
	// stays published and accepted unless TokenStandbyRefused
	// (TOKEN_STANDBY_KEY=refused; default accepted).
	TokenSigningKey     int
	TokenStandbyRefused bool
	// TokenIssuer (TOKEN_ISSUER) is the iss claim of tokens: the API's
	// public base URL (https://host/api/v1); "" is auth.DefaultIssuer.
	TokenIssuer string
	AdminAPIKey string // ADMIN_API_KEY, or the secret named by ADMIN_API_KEY_ARN
	// DashboardSessionKey seals the company dashboard's session cookies
	// (pkg/sessions): DASHBOARD_SESSION_KEY, or the secret named by
	// DASHBOARD_SESSION_KEY_ARN; at least 32 characters.
	DashboardSessionKey string
	// WebhookKeyARN (WEBHOOK_KEY_ARN) is the KMS key that seals webhook
	// signing secrets in AWS; locally WebhookKey (WEBHOOK_KEY) is a
	// 64-hex-character key instead.
	WebhookKeyARN, WebhookKey string
	// IssuerWebhookSecret verifies the card issuer's notifications:
	// ISSUER_WEBHOOK_SECRET, or the secret named by ISSUER_WEBHOOK_SECRET_ARN.
	IssuerWebhookSecret []byte
	// OperatorBaseURL (OPERATOR_BASE_URL) is the mobile-money aggregator's
	// API (pawaPay's); OperatorAPIToken its bearer token:
	// OPERATOR_API_TOKEN, or the secret named by OPERATOR_API_TOKEN_ARN.
	// Both are read in production mode only: the sandbox operator needs
	// neither.
	OperatorBaseURL, OperatorAPIToken string
	// IssuerBaseURL (ISSUER_BASE_URL) is the card issuer's API (Stripe's;
	// "" is https://api.stripe.com); IssuerAPIKey its secret key:
	// ISSUER_API_KEY, or the secret named by ISSUER_API_KEY_ARN. Both are
	// read in production mode only: the sandbox issuer needs neither.
	IssuerBaseURL, IssuerAPIKey string
	// OperatorCallbackKey (OPERATOR_CALLBACK_PUBLIC_KEY) verifies the
	// aggregator's signed callbacks: its public key, PEM or the base64 of
	// its DER. Required in production mode.
	OperatorCallbackKey string
	DynamoDBEndpoint    string // AWS_ENDPOINT_URL_DYNAMODB: DynamoDB Local
	SQSEndpoint         string // AWS_ENDPOINT_URL_SQS: the SQS emulator
	S3Endpoint          string // AWS_ENDPOINT_URL_S3: the S3 emulator
	KMSEndpoint         string // AWS_ENDPOINT_URL_KMS: a KMS stand-in (tests)
	// CognitoEndpoint (AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER) is
	// cognito-local, the user pool's stand-in.
	CognitoEndpoint string
	// SecretsEndpoint (AWS_ENDPOINT_URL_SECRETS_MANAGER) is a Secrets
	// Manager stand-in (tests).
	SecretsEndpoint string
	// CodeDeployEndpoint (AWS_ENDPOINT_URL_CODEDEPLOY) and LambdaEndpoint
	// (AWS_ENDPOINT_URL_LAMBDA) are stand-ins of CodeDeploy and Lambda
	// (tests), which the deploy-check function calls.
	CodeDeployEndpoint, LambdaEndpoint string
	// AWS is the region and credentials of AWSFromEnv; empty for a function
	// that calls no AWS service.
	AWS aws.Config
}

// SecretReader reads the value of the secret arn: secrets.Manager in AWS.
type SecretReader interface {
	SecretValue(ctx context.Context, arn string) (string, error)
}

// NewSecretReader returns the SecretReader of a function's AWS
// configuration and endpoint (Config.SecretsEndpoint). It is called once,
// and only when the function is given a secret's ARN.
type NewSecretReader func(cfg aws.Config, endpoint string) SecretReader

// DefaultMetricsNamespace is Config.MetricsNamespace where
// METRICS_NAMESPACE is not set: the local stack's.
const DefaultMetricsNamespace = "payments/local"

// ErrConfig reports a missing or malformed setting.
var ErrConfig = errors.New("function: configuration")

// ConfigFromEnv reads the Config of function (its folder name under
// functions/) from the environment: only the variables Functions declares
// for it. Every variable naming a resource must be set; a secret NAME_ARN is
// read with the SecretReader that secrets returns, or taken from NAME when
// only that is set (the local stack). A function that needs no secret
// passes nil for secrets, and one that calls no AWS service gets no AWS
// configuration.
func ConfigFromEnv(ctx context.Context, function string, secrets NewSecretReader) (Config, error) {
	c := Config{
		DynamoDBEndpoint: os.Getenv("AWS_ENDPOINT_URL_DYNAMODB"),
		SQSEndpoint:      os.Getenv("AWS_ENDPOINT_URL_SQS"),
		S3Endpoint:       os.Getenv("AWS_ENDPOINT_URL_S3"),
		KMSEndpoint:      os.Getenv("AWS_ENDPOINT_URL_KMS"),
		CognitoEndpoint:  os.Getenv("AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER"),
		SecretsEndpoint:  os.Getenv("AWS_ENDPOINT_URL_SECRETS_MANAGER"),

		CodeDeployEndpoint: os.Getenv("AWS_ENDPOINT_URL_CODEDEPLOY"),
		LambdaEndpoint:     os.Getenv("AWS_ENDPOINT_URL_LAMBDA"),
	}
	fn, ok := Functions[function]
	if !ok {
		return c, fmt.Errorf("%w: no function %q in function.Functions", ErrConfig, function)
	}
	var secretVars []string
	for _, name := range fn.Variables() {
		st, ok := settings[name]
		switch {
		case !ok:
			return c, fmt.Errorf("%w: %s uses %s, which ConfigFromEnv does not know", ErrConfig, function, name)
		case st.secret != nil:
			secretVars = append(secretVars, name)
		default:
			if err := st.read(&c, name); err != nil {
				return c, err
			}
		}
	}
	var err error
	if len(fn.Grants) > 0 {
		if c.AWS, err = AWSFromEnv(); err != nil {
			return c, err
		}
	}
	if err := c.checkOperator(fn); err != nil {
		return c, err
	}
	if err := c.checkDeployedProduction(); err != nil {
		return c, err
	}
	var reader SecretReader
	for _, name := range secretVars {
		st := settings[name]
		if st.productionOnly && c.Mode != ModeProduction {
			continue // the sandbox operator and issuer need no credentials
		}
		plain := strings.TrimSuffix(name, "_ARN")
		value := os.Getenv(plain)
		if arn := os.Getenv(name); arn != "" {
			if reader == nil {
				if secrets == nil {
					return c, fmt.Errorf("%w: %s is set but the function reads no secrets", ErrConfig, name)
				}
				reader = secrets(c.AWS, c.SecretsEndpoint)
			}
			var err error
			if value, err = reader.SecretValue(ctx, arn); err != nil {
				return c, fmt.Errorf("%w: read secret %s: %v", ErrConfig, arn, err)
			}
		}
		if value == "" {
			return c, fmt.Errorf("%w: %s is not set (nor %s, the value itself)", ErrConfig, name, plain)
		}
		if err := st.secret(&c, value); err != nil {
			return c, err
		}
	}
	return c, nil
}

// TokenKeySlot returns the slot (0, 1) of the token key variable name
// (TOKEN_KEY_A_ARN, TOKEN_KEY_B_ARN).
func TokenKeySlot(name string) int {
	if strings.HasPrefix(name, "TOKEN_KEY_B") {
		return 1
	}
	return 0
}

// AWSFromEnv returns the AWS configuration Lambda gives a function in its
// environment: the region (AWS_REGION, or AWS_DEFAULT_REGION) and the
// execution role's credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN), which are valid for the life of the execution
// environment. It reads no file and asks no credentials endpoint, so a
// function starts without a network call and links none of the SDK's
// shared-config, SSO or STS code (docs/footprint.md).
func AWSFromEnv() (aws.Config, error) {
	region := envOr("AWS_REGION", os.Getenv("AWS_DEFAULT_REGION"))
	key, secret := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
	switch {
	case region == "":
		return aws.Config{}, fmt.Errorf("%w: AWS_REGION is not set", ErrConfig)
	case key == "" || secret == "":
		return aws.Config{}, fmt.Errorf("%w: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set", ErrConfig)
	}
	return aws.Config{
		Region:      region,
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, os.Getenv("AWS_SESSION_TOKEN")),
	}, nil
}
