package function

// The settings: how ConfigFromEnv reads each variable a function may use.

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"payments/pkg/limits"
)

// A setting is how ConfigFromEnv reads one variable into a Config. A
// variable is read only by the functions whose row (Functions) names it.
type setting struct {
	// read reads the variable name from the environment into c.
	read func(c *Config, name string) error
	// secret, set instead of read for a secret named by its ARN (NAME_ARN),
	// takes its value into c: read from Secrets Manager, or from NAME
	// itself on the local stack, once every other setting is read.
	secret func(c *Config, value string) error
	// productionOnly marks a provider's credential, which the sandbox
	// provider needs not: it is read in production mode alone.
	productionOnly bool
}

// settings maps each variable a function may read to how it is read: a new
// setting is one entry here, and the rows (Functions) of the functions that
// read it. A test holds every variable of every row to an entry, and every
// entry to a row.
var settings = map[string]setting{
	"MODE": {read: func(c *Config, name string) error {
		if c.Mode = envOr(name, ModeSandbox); c.Mode != ModeSandbox && c.Mode != ModeProduction {
			return fmt.Errorf("%w: MODE must be %s or %s, not %q", ErrConfig, ModeSandbox, ModeProduction, c.Mode)
		}
		return nil
	}},
	"METRICS_NAMESPACE": {read: func(c *Config, name string) error {
		c.MetricsNamespace = envOr(name, DefaultMetricsNamespace)
		return nil
	}},
	"STAGE":                        {read: optional(func(c *Config) *string { return &c.Stage })},
	"ALARM_EMAIL":                  {read: optional(func(c *Config) *string { return &c.AlarmEmail })},
	"OPERATOR_BASE_URL":            {read: optional(func(c *Config) *string { return &c.OperatorBaseURL })},
	"OPERATOR_CALLBACK_PUBLIC_KEY": {read: optional(func(c *Config) *string { return &c.OperatorCallbackKey })},
	"TABLE_NAME":                   {read: required(func(c *Config) *string { return &c.TableName })},
	"AUDIT_TABLE_NAME":             {read: required(func(c *Config) *string { return &c.AuditTableName })},
	"PAYOUTS_QUEUE_URL":            {read: required(func(c *Config) *string { return &c.PayoutsQueueURL })},
	"BULK_PAYOUTS_QUEUE_URL":       {read: required(func(c *Config) *string { return &c.BulkPayoutsQueueURL })},
	"WEBHOOKS_QUEUE_URL":           {read: required(func(c *Config) *string { return &c.WebhooksQueueURL })},
	"ISSUER_EVENTS_QUEUE_URL":      {read: required(func(c *Config) *string { return &c.IssuerEventsQueueURL })},
	"FUNDS_QUEUE_URL":              {read: required(func(c *Config) *string { return &c.FundsQueueURL })},
	"USER_POOL_ID":                 {read: required(func(c *Config) *string { return &c.UserPoolID })},
	"USER_POOL_CLIENT_ID":          {read: required(func(c *Config) *string { return &c.UserPoolClientID })},
	"DOCUMENTS_BUCKET":             {read: required(func(c *Config) *string { return &c.DocumentsBucket })},
	"TOKEN_TTL_SECONDS":            {read: duration(time.Second, time.Hour, func(c *Config) *time.Duration { return &c.TokenTTL })},
	"TOKEN_RATE_LIMIT":             {read: count(10, func(c *Config) *int { return &c.TokenRateLimit })},
	"REVEAL_LIMIT_PER_HOUR":        {read: count(100, func(c *Config) *int { return &c.RevealLimit })},
	"RATE_LIMIT_READ":              {read: companyLimit(limits.Defaults.Read, func(c *Config) *limits.Limit { return &c.CompanyLimits.Read })},
	"RATE_LIMIT_MONEY":             {read: companyLimit(limits.Defaults.Money, func(c *Config) *limits.Limit { return &c.CompanyLimits.Money })},
	"RATE_LIMIT_REVEAL":            {read: companyLimit(limits.Defaults.Reveal, func(c *Config) *limits.Limit { return &c.CompanyLimits.Reveal })},
	"PAYMENT_DEADLINE_SECONDS": {read: func(c *Config, name string) error {
		if err := duration(time.Second, DefaultPaymentDeadline, func(c *Config) *time.Duration { return &c.PaymentDeadline })(c, name); err != nil {
			return err
		}
		if c.PaymentDeadline > MaxPaymentDeadline {
			return fmt.Errorf("%w: %s must be at most %d (the %v reconciliation window), not %d",
				ErrConfig, name, int(MaxPaymentDeadline/time.Second), MaxPaymentDeadline, int(c.PaymentDeadline/time.Second))
		}
		return nil
	}},
	"CARD_HOLD_EXPIRY_SECONDS":          {read: duration(time.Second, DefaultCardHoldExpiry, func(c *Config) *time.Duration { return &c.CardHoldExpiry })},
	"RECONCILIATION_FIRST_WINDOW_HOURS": {read: duration(time.Hour, DefaultReconciliationFirstWindow, func(c *Config) *time.Duration { return &c.ReconciliationFirstWindow })},
	"ISSUER_DECISION_DEADLINE_MS": {read: func(c *Config, name string) error {
		if err := duration(time.Millisecond, DefaultIssuerDecisionDeadline, func(c *Config) *time.Duration { return &c.IssuerDecisionDeadline })(c, name); err != nil {
			return err
		}
		if c.IssuerDecisionDeadline > MaxIssuerDecisionDeadline {
			return fmt.Errorf("%w: %s must be at most %d, within the card-network function's time, not %d",
				ErrConfig, name, MaxIssuerDecisionDeadline/time.Millisecond, c.IssuerDecisionDeadline/time.Millisecond)
		}
		return nil
	}},
	"ADMIN_CREDIT_IN_PRODUCTION": {read: func(c *Config, name string) error {
		switch v := os.Getenv(name); v {
		case "", "false":
		case "true":
			c.AdminCreditInProduction = true
		default:
			return fmt.Errorf("%w: %s must be true or false, not %q", ErrConfig, name, v)
		}
		return nil
	}},
	"TOKEN_SIGNING_KEY": {read: func(c *Config, name string) error {
		switch v := envOr(name, "a"); v {
		case "a", "b":
			c.TokenSigningKey = int(v[0] - 'a')
		default:
			return fmt.Errorf("%w: %s must be a or b, not %q", ErrConfig, name, v)
		}
		return nil
	}},
	"TOKEN_STANDBY_KEY": {read: func(c *Config, name string) error {
		switch v := envOr(name, "accepted"); v {
		case "accepted":
		case "refused":
			c.TokenStandbyRefused = true
		default:
			return fmt.Errorf("%w: %s must be accepted or refused, not %q", ErrConfig, name, v)
		}
		return nil
	}},
	"TOKEN_ISSUER": {read: func(c *Config, name string) error {
		if c.TokenIssuer = os.Getenv(name); c.TokenIssuer != "" {
			if u, err := url.Parse(c.TokenIssuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" ||
				strings.HasSuffix(c.TokenIssuer, "/") || u.RawQuery != "" || u.Fragment != "" {
				return fmt.Errorf("%w: %s must be an http(s) URL without a trailing slash, not %q", ErrConfig, name, c.TokenIssuer)
			}
		}
		return nil
	}},
	"ISSUER_BASE_URL": {read: func(c *Config, name string) error {
		if c.IssuerBaseURL = os.Getenv(name); c.IssuerBaseURL != "" {
			if u, err := url.Parse(c.IssuerBaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				return fmt.Errorf("%w: %s must be an http(s) URL, not %q", ErrConfig, name, c.IssuerBaseURL)
			}
		}
		return nil
	}},
	// A KMS key is used, never read: locally the variable without _ARN
	// holds a key instead.
	"TOKEN_KEY_A_ARN": {read: kmsKey(func(c *Config) (*string, *string) { return &c.TokenKeyARNs[0], &c.TokenKeys[0] })},
	"TOKEN_KEY_B_ARN": {read: kmsKey(func(c *Config) (*string, *string) { return &c.TokenKeyARNs[1], &c.TokenKeys[1] })},
	"WEBHOOK_KEY_ARN": {read: kmsKey(func(c *Config) (*string, *string) { return &c.WebhookKeyARN, &c.WebhookKey })},
	// In production mode the issuer keeps the card secrets and the stack
	// gives no card key (keyvaults.Card seals nothing).
	"CARD_KEY_ARN": {read: func(c *Config, name string) (err error) {
		c.CardKeyARN, c.CardKey, err = envKey(name, envOr("MODE", ModeSandbox) != ModeProduction)
		return err
	}},
	"ADMIN_API_KEY_ARN": {secret: func(c *Config, v string) error { c.AdminAPIKey = v; return nil }},
	"DASHBOARD_SESSION_KEY_ARN": {secret: func(c *Config, v string) error {
		c.DashboardSessionKey = v
		return nil
	}},
	"ISSUER_WEBHOOK_SECRET_ARN": {secret: func(c *Config, v string) error { c.IssuerWebhookSecret = []byte(v); return nil }},
	"OPERATOR_API_TOKEN_ARN": {productionOnly: true, secret: func(c *Config, v string) error {
		if v == SecretPlaceholder {
			return fmt.Errorf("%w: the secret OPERATOR_API_TOKEN_ARN still holds the stack's placeholder: put the aggregator's API token in it (docs/providers.md)", ErrConfig)
		}
		c.OperatorAPIToken = v
		return nil
	}},
	"ISSUER_API_KEY_ARN": {productionOnly: true, secret: func(c *Config, v string) error {
		if v == SecretPlaceholder {
			return fmt.Errorf("%w: the secret ISSUER_API_KEY_ARN still holds the stack's placeholder: put the card issuer's API key in it (docs/providers.md)", ErrConfig)
		}
		c.IssuerAPIKey = v
		return nil
	}},
}

// PlainSecrets are the settings whose value is a secret, given in the
// environment itself only by the local stack: a deployment names each by
// its ARN (NAME_ARN, a secret of Secrets Manager or a KMS key) instead.
// A deployed production stage refuses to start with any of them set. They
// are the settings' ARN variables without _ARN.
var PlainSecrets = plainSecrets()

func plainSecrets() []string {
	var plain []string
	for name := range settings {
		if p, ok := strings.CutSuffix(name, "_ARN"); ok {
			plain = append(plain, p)
		}
	}
	slices.Sort(plain)
	return plain
}

// optional reads a variable that may be unset into the field of c.
func optional(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, name string) error {
		*field(c) = os.Getenv(name)
		return nil
	}
}

// required reads a variable that must be set into the field of c.
func required(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, name string) (err error) {
		*field(c), err = envRequired(name)
		return err
	}
}

// count reads a positive integer, def when unset, into the field of c.
func count(def int, field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, name string) (err error) {
		*field(c), err = envInt(name, def)
		return err
	}
}

// duration reads a positive whole number of units, def when unset, into
// the field of c.
func duration(unit, def time.Duration, field func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, name string) error {
		n, err := envInt(name, int(def/unit))
		*field(c) = time.Duration(n) * unit
		return err
	}
}

// companyLimit reads a company limit "rate/burst" (limits.ParseLimit), def
// when unset, into the field of c.
func companyLimit(def limits.Limit, field func(*Config) *limits.Limit) func(*Config, string) error {
	return func(c *Config, name string) error {
		v := os.Getenv(name)
		if v == "" {
			*field(c) = def
			return nil
		}
		l, err := limits.ParseLimit(v)
		if err != nil {
			return fmt.Errorf("%w: %s must be rate/burst, two positive integers (\"50/100\"), not %q", ErrConfig, name, v)
		}
		*field(c) = l
		return nil
	}
}

// kmsKey reads a KMS key that must be given (envKey) into the fields of c:
// its ARN and the local key that stands in for it.
func kmsKey(fields func(*Config) (arn, local *string)) func(*Config, string) error {
	return func(c *Config, name string) (err error) {
		arn, local := fields(c)
		*arn, *local, err = envKey(name, true)
		return err
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// envRequired returns the value of the variable name, which must be set.
func envRequired(name string) (string, error) {
	v := os.Getenv(name)
	if v == "" {
		return "", fmt.Errorf("%w: %s is not set", ErrConfig, name)
	}
	return v, nil
}

// envKey reads the KMS key named by the variable name (…_ARN), and the
// local key that stands in for it locally, the variable without _ARN; when
// required, one of them must be set.
func envKey(name string, required bool) (arn, local string, err error) {
	plain := strings.TrimSuffix(name, "_ARN")
	arn, local = os.Getenv(name), os.Getenv(plain)
	if required && arn == "" && local == "" {
		return "", "", fmt.Errorf("%w: %s is not set (nor %s, a local key)", ErrConfig, name, plain)
	}
	return arn, local, nil
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
